#include "tools/server_main.h"
