// TEMPORARY scaffolding so the tree links while the jobs model is written.
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <stdexcept>
#include "projections/state.h"

namespace runledger::jobs {

const char* to_string(AttemptState s) { throw std::logic_error("unimplemented"); }
const char* to_string(StepState s) { throw std::logic_error("unimplemented"); }
std::optional<AttemptState> attempt_state_from(std::string_view s) { throw std::logic_error("unimplemented"); }
bool is_terminal(AttemptState s) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const Enqueue& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const Claim& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const Heartbeat& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const Release& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const Start& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const StepStart& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const StepDone& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const StepFail& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const Cancel& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const CancelAck& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const OutcomeUnknown& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const Reattach& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const Rerun& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const ExpireLeases& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
void evolve(State& s, const fb::Event& e) { throw std::logic_error("unimplemented"); }
int64_t next_due_ms(const State& s) { throw std::logic_error("unimplemented"); }
bool finished(const Job& j) { throw std::logic_error("unimplemented"); }
nlohmann::json view(const State& s, const Job& j) { throw std::logic_error("unimplemented"); }
nlohmann::json to_json(const Job& j) { throw std::logic_error("unimplemented"); }
Job from_json(const nlohmann::json& j) { throw std::logic_error("unimplemented"); }
void adopt(State& s, Job job) { throw std::logic_error("unimplemented"); }
void evict(State& s, const std::string& job_id) { throw std::logic_error("unimplemented"); }

}  // namespace runledger::jobs
