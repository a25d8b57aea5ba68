// Transitional (issue 15): the remap engine lives in engines/remap.h; ops/pad.cpp still includes
// this name until its family is converted.
#pragma once
#include "engines/remap.h"
