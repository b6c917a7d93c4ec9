// runledgerd: the engine with its HTTP facade on the embedded store.
#include "tools/runledgerd.h"

int main(int argc, char** argv) { return runledger::server_main(argc, argv); }
