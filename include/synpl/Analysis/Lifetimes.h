//===- Lifetimes.h ------------------------------------------------------*- C++ -*-===//
#ifndef SYNPL_ANALYSIS_LIFETIMES_H
#define SYNPL_ANALYSIS_LIFETIMES_H

namespace synpl {} // namespace synpl

#endif
