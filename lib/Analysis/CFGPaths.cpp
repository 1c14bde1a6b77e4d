//===- CFGPaths.cpp --------------------------------------------------------------===//
#include "synpl/Analysis/CFGPaths.h"
