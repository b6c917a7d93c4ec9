#include "projections/state.h"

#include "projections/event_types.h"

namespace runledger {

void evolve(State& s, const fb::Event& e) {
  const std::optional<StreamKind> kind = event_stream_kind(e.payload_type());
  if (kind.has_value()) {
    switch (*kind) {
      case StreamKind::kJob:
        jobs::evolve(s, e);
        break;
      case StreamKind::kConnector:
        connectors::evolve(s, e);
        break;
      case StreamKind::kHold:
        holds::evolve(s, e);
        break;
    }
  }
  s.last_seq = e.seq();
}

}  // namespace runledger
