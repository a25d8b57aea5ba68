// Transitional (issue 15): the remap engine lives in engines/remap.h. ops/pad.cpp (another family)
// still includes this name; once it includes engines/remap.h, this header goes.
#pragma once
#include "engines/remap.h"
