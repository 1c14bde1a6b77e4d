//===- SynMutator.h - Structure-aware mutation of .syn inputs ---*- C++ -*-===//
//
// Byte mutations of a `.syn` program mostly break its brackets or split
// its words, and the front end stops at the first token. This mutator
// splits the text into tokens (words, numbers, strings, punctuation, with
// the whitespace and comments before each kept) and reads the brackets as
// a tree of groups, then edits the tree: delete, duplicate or swap the
// comma-separated elements of a group (a layer of a stack, an argument, a
// field), delete a group or a token, duplicate a group, swap two groups of
// the same bracket, move a group elsewhere, replace a word with another word of the
// file (a layer, a field, a node name) or a number with an edge value (0,
// 1, -1, a huge count, a fraction). The brackets stay balanced, so the
// parser reads on into the declarations and the verifiers run.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_SYNMUTATOR_H
#define SYNPL_TEST_FUZZ_SYNMUTATOR_H

#include <string>

namespace synpl::fuzz {

/// One structure-aware mutation of the `.syn` text `in` with `seed`, or ""
/// when it has no tokens to mutate.
std::string mutateSyn(const std::string &in, unsigned seed);

} // namespace synpl::fuzz

#endif // SYNPL_TEST_FUZZ_SYNMUTATOR_H
