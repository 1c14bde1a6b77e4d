//===- DeepInputTest.cpp - The nesting bound the tools check first --------===//
#include "synpl/Support/DeepInput.h"

#include <catch2/catch.hpp>

#include <string>

using synpl::findDeepNesting;

TEST_CASE("nesting is counted over all four brackets", "[deepinput]") {
  CHECK_FALSE(findDeepNesting("f(a[b{c<d>}])", 4));
  CHECK(findDeepNesting("f(a[b{c<d>}])", 3) == std::optional<size_t>(7));
  // Depth falls back as brackets close.
  CHECK_FALSE(findDeepNesting("(())(())(())", 2));
  CHECK(findDeepNesting(std::string(3000, '[') + std::string(3000, ']')) ==
        std::optional<size_t>(synpl::kMaxInputNesting));
}

TEST_CASE("strings, comments and arrows open nothing", "[deepinput]") {
  CHECK_FALSE(findDeepNesting("\"((((\" // ((((\n()", 1));
  CHECK_FALSE(findDeepNesting("\"a \\\" ((((\" ()", 1)); // an escaped quote
  CHECK_FALSE(findDeepNesting("(a) -> (b) -> (c)", 1));
  // The > of -> closes nothing: here depth reaches 2 inside the map.
  CHECK(findDeepNesting("<(d0) -> (d0)>", 1) == std::optional<size_t>(1));
  // A comment ends at its line.
  CHECK(findDeepNesting("// (\n((", 1) == std::optional<size_t>(6));
}

TEST_CASE("an unbalanced closer is ignored", "[deepinput]") {
  CHECK_FALSE(findDeepNesting(")))(((", 3));
  CHECK(findDeepNesting(")))((((", 3) == std::optional<size_t>(6));
}
