// Placeholder suite.
#include "test_util.h"
