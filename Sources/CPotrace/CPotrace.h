#include <potracelib.h>
