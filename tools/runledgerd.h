// The runledgerd entry point: flags, start-up, serve, clean shutdown.
#pragma once

namespace runledger {
int server_main(int argc, char** argv);
}
