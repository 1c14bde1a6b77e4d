//===- Lifetimes.cpp --------------------------------------------------------------===//
#include "synpl/Analysis/Lifetimes.h"
