// The end-to-end HTTP test helpers compiled into the cluster tests as well
// (the build globs one folder per test binary; they live with the HTTP tests).
#include "tests/http/api_client.cc"
