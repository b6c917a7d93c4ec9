// TEMPORARY scaffolding so the tree links while the connectors model is written.
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <stdexcept>
#include "projections/state.h"

namespace runledger::connectors {

const char* to_string(Status s) { throw std::logic_error("unimplemented"); }
const char* to_string(SyncStatus s) { throw std::logic_error("unimplemented"); }
const char* to_string(DocStatus s) { throw std::logic_error("unimplemented"); }
std::string cut_code_points(std::string_view text, size_t max) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const Create& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const Update& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const Delete& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const StartSync& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const AbortSync& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const ReportProgress& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const ReportSucceeded& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const ReportFailed& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const RunSchedule& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
Decision decide(const State& s, const RecordScheduleGaps& c, const Context& ctx) { throw std::logic_error("unimplemented"); }
void evolve(State& s, const fb::Event& e) { throw std::logic_error("unimplemented"); }
int64_t next_due_ms(const State& s) { throw std::logic_error("unimplemented"); }
bool finished(const Connector& c) { throw std::logic_error("unimplemented"); }
nlohmann::json view(const Connector& c) { throw std::logic_error("unimplemented"); }
nlohmann::json documents_view(const Connector& c, std::optional<DocStatus> filter) { throw std::logic_error("unimplemented"); }
nlohmann::json to_json(const Connector& c) { throw std::logic_error("unimplemented"); }
Connector from_json(const nlohmann::json& j) { throw std::logic_error("unimplemented"); }
void adopt(State& s, Connector c) { throw std::logic_error("unimplemented"); }
void evict(State& s, const std::string& id) { throw std::logic_error("unimplemented"); }

}  // namespace runledger::connectors
