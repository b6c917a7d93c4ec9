#include "events/event_codec.h"

namespace runledger {

void encode_event(const EventDraft& d, std::string* out) {
  // One builder per thread: encoding allocates nothing once it is warm.
  thread_local flatbuffers::FlatBufferBuilder fbb(1024);
  fbb.Clear();
  auto stream = fbb.CreateString(d.stream.data(), d.stream.size());
  auto actor = fbb.CreateString(d.actor.data(), d.actor.size());
  auto command_id = fbb.CreateString(d.command_id.data(), d.command_id.size());
  auto prev = fbb.CreateVector(d.prev_hash.data(), d.prev_hash.size());
  auto payload = d.payload->Pack(fbb);
  fb::EventBuilder b(fbb);
  b.add_seq(d.seq);
  b.add_stream(stream);
  b.add_stream_version(d.stream_version);
  b.add_recorded_at_ms(d.recorded_at_ms);
  b.add_actor(actor);
  b.add_command_id(command_id);
  b.add_prev_hash(prev);
  b.add_payload_type(d.payload->type);
  b.add_payload(payload);
  fb::FinishEventBuffer(fbb, b.Finish());
  out->assign(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

Status decode_event(std::string_view bytes, const fb::Event** event) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (bytes.size() < 8 || !fb::EventBufferHasIdentifier(bytes.data()) ||
      !fb::VerifyEventBuffer(verifier)) {
    return Status::Corruption("event bytes do not verify as a runledger event");
  }
  const fb::Event* e = fb::GetEvent(bytes.data());
  if (e->stream() == nullptr || e->prev_hash() == nullptr || e->prev_hash()->size() != 32 ||
      e->payload_type() == fb::Payload::NONE || e->payload() == nullptr || e->seq() == 0 ||
      e->stream_version() == 0) {
    return Status::Corruption("event envelope is incomplete", e->seq());
  }
  if (static_cast<uint8_t>(e->payload_type()) > static_cast<uint8_t>(fb::Payload::MAX)) {
    return Status::Corruption("unknown event type", e->seq());
  }
  *event = e;
  return Status::Ok();
}

std::string_view event_type_name(fb::Payload type) { return fb::EnumNamePayload(type); }

bool is_event_type_name(std::string_view name) {
  for (fb::Payload t : fb::EnumValuesPayload()) {
    if (t != fb::Payload::NONE && event_type_name(t) == name) return true;
  }
  return false;
}

}  // namespace runledger
