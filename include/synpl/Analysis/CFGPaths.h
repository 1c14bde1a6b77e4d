//===- CFGPaths.h ------------------------------------------------------*- C++ -*-===//
#ifndef SYNPL_ANALYSIS_CFGPATHS_H
#define SYNPL_ANALYSIS_CFGPATHS_H

namespace synpl {} // namespace synpl

#endif
