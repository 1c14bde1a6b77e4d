//===- Shapes.h ------------------------------------------------------*- C++ -*-===//
#ifndef SYNPL_ANALYSIS_SHAPES_H
#define SYNPL_ANALYSIS_SHAPES_H

namespace synpl {} // namespace synpl

#endif
