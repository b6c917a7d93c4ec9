// The end-to-end HTTP test helpers (a JSON client, job calls, raw sockets)
// compiled into the fault tests as well: the build globs one folder per test
// binary, and these helpers live with the HTTP tests they were written for.
#include "tests/http/api_client.cc"
#include "tests/http/job_calls.cc"
#include "tests/http/raw_connection.cc"
