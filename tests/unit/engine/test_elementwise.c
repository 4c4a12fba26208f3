#include "engine_test.h"
void et_test_elementwise(void) {}
