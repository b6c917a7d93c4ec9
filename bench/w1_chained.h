// The W1 driver without a thread per caller: each caller is a chain that
// submits its next command from the completion of the previous one
// (Engine::submit), so the chains run on the engine's writer thread, which
// completes every command, and the only other thread is the one waiting for
// the end. (A caller thread of their own, with the writer only queueing each
// reply for it, measured slower on two cores: 121-133k commands/s against
// 133-160k, alternating.) This is how a server with many connections and
// few threads keeps the engine busy; with thousands of callers the group
// commits grow large enough to show what the engine itself can do.
#pragma once

#include <string_view>

#include "bench/w1_engine.h"

namespace runledger::bench {

W1Outcome drive_w1_chained(Engine& engine, const W1Plan& plan, const ProgressFn& progress,
                           std::string_view phase);

}  // namespace runledger::bench
