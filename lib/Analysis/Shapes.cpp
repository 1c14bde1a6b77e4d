//===- Shapes.cpp --------------------------------------------------------------===//
#include "synpl/Analysis/Shapes.h"
