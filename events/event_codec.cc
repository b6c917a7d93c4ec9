#include "events/event_codec.h"

#include <cstdio>
#include <mutex>

#include <flatbuffers/idl.h>

namespace runledger {
namespace {

const char kSchemaText[] =
#include "events/event_schema.inc"
    ;

// The schema parser is built once; GenerateText only reads it afterwards.
const flatbuffers::Parser& schema_parser() {
  static const flatbuffers::Parser* parser = [] {
    flatbuffers::IDLOptions opts;
    opts.strict_json = true;
    opts.output_default_scalars_in_json = true;
    opts.indent_step = -1;
    auto* p = new flatbuffers::Parser(opts);
    if (!p->Parse(kSchemaText)) {
      std::fprintf(stderr, "event schema does not parse: %s\n", p->error_.c_str());
      std::abort();
    }
    return p;
  }();
  return *parser;
}

}  // namespace

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

namespace {

// (year, month, day) of a day count since 1970-01-01, in the proleptic
// Gregorian calendar (H. Hinnant's civil_from_days).
void civil_from_days(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

// Writes `v` as exactly `n` decimal digits ending before `end`.
void put_digits(uint64_t v, int n, char* end) {
  for (int i = 0; i < n; ++i, v /= 10) *--end = static_cast<char>('0' + v % 10);
}

}  // namespace

// Arithmetic instead of gmtime_r + snprintf: every view of a job carries a
// handful of times, and those two took a twentieth of the sequencer.
std::string format_time_ms(int64_t ms) {
  if (ms < 0) ms = 0;
  const int64_t secs = ms / 1000;
  const int64_t days = secs / 86400;
  const int64_t sod = secs % 86400;
  int64_t year;
  unsigned month, day;
  civil_from_days(days, &year, &month, &day);
  // The year takes four digits, or more once past 9999.
  int year_digits = 4;
  for (int64_t y = year / 10000; y > 0; y /= 10) ++year_digits;
  std::string out(static_cast<size_t>(year_digits) + 20, '\0');
  char* p = out.data();
  put_digits(static_cast<uint64_t>(year), year_digits, p + year_digits);
  p += year_digits;
  const auto field = [&p](char sep, uint64_t v, int n) {
    *p++ = sep;
    put_digits(v, n, p + n);
    p += n;
  };
  field('-', month, 2);
  field('-', day, 2);
  field('T', static_cast<uint64_t>(sod / 3600), 2);
  field(':', static_cast<uint64_t>(sod / 60 % 60), 2);
  field(':', static_cast<uint64_t>(sod % 60), 2);
  field('.', static_cast<uint64_t>(ms % 1000), 3);
  *p = 'Z';
  return out;
}

namespace {

bool digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

int64_t days_from_civil(int y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<int64_t>(era) * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

bool parse_time_ms(std::string_view s, int64_t* ms) {
  // YYYY-MM-DDTHH:MM:SS[.fff...](Z|+hh:mm|-hh:mm)
  int y, mo, d, h, mi, se;
  if (s.size() < 20 || !digits(s, 0, 4, &y) || s[4] != '-' || !digits(s, 5, 2, &mo) ||
      s[7] != '-' || !digits(s, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
      !digits(s, 11, 2, &h) || s[13] != ':' || !digits(s, 14, 2, &mi) || s[16] != ':' ||
      !digits(s, 17, 2, &se)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60 || y < 1970) {
    return false;
  }
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDays[mo - 1] || (mo == 2 && d == 29 && !leap)) return false;
  size_t pos = 19;
  int frac_ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    int scale = 100;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      frac_ms += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start || pos - start > 9) return false;
  }
  int64_t offset_s = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return false;
    }
    offset_s = (oh * 3600 + om * 60) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return false;
  }
  if (pos != s.size()) return false;
  int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  int64_t secs = days * 86400 + h * 3600 + mi * 60 + (se == 60 ? 59 : se) - offset_s;
  if (secs < 0) return false;
  *ms = secs * 1000 + frac_ms;
  return true;
}

namespace {

// Every `X_ms` field of the schema is a point in time in ms since the epoch;
// readers get it as `X` in RFC 3339, like `recorded_at` (e.g. ScheduleGap's
// `from`/`to`, docs/domain.md 2.5). 0 is the schema's "none" (a job enqueued
// without `not_before`, the slot of a sync started by hand): null, not 1970.
void render_times(nlohmann::json& data, bool unset_as_null) {
  constexpr std::string_view kMsSuffix = "_ms";
  if (!data.is_object()) return;
  nlohmann::json out = nlohmann::json::object();
  for (auto& [key, value] : data.items()) {
    if (value.is_object()) render_times(value, unset_as_null);
    if (key.size() > kMsSuffix.size() && key.ends_with(kMsSuffix) && value.is_number_integer()) {
      const int64_t ms = value.get<int64_t>();
      out[key.substr(0, key.size() - kMsSuffix.size())] =
          ms == 0 && unset_as_null ? nlohmann::json(nullptr) : nlohmann::json(format_time_ms(ms));
    } else {
      out[key] = std::move(value);
    }
  }
  data = std::move(out);
}

// A job's `input` and a step's `output` are stored as JSON text (the events
// keep the client's JSON as given); readers get the JSON itself, as in the
// job view. (No output given: the field is not in the event.)
void embed_json_texts(nlohmann::json& data) {
  for (const char* key : {"input", "output"}) {
    auto it = data.find(key);
    if (it == data.end() || !it->is_string()) continue;
    const std::string& text = it->get_ref<const std::string&>();
    if (text.empty()) {
      *it = nullptr;
      continue;
    }
    auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) *it = std::move(parsed);
  }
}

// ConnectorCreated and ConnectorUpdated keep "no schedule" as 0 (the
// schema's default); the connector's view, and so readers, show null.
void render_absent_schedule(nlohmann::json& data) {
  auto it = data.find("sync_schedule_s");
  if (it != data.end() && it->is_number_integer() && it->get<int64_t>() == 0) *it = nullptr;
}

}  // namespace

nlohmann::json event_data_json(const fb::Event& event, DataRendering rendering) {
  const auto& parser = schema_parser();
  std::string table_name = "runledger.fb.";
  table_name += event_type_name(event.payload_type());
  std::string text;
  if (event.payload() == nullptr ||
      !flatbuffers::GenerateTextFromTable(parser, event.payload(), table_name, &text)) {
    return nlohmann::json::object();
  }
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return nlohmann::json::object();
  const bool version1 = rendering == DataRendering::kExportVersion1;
  render_times(j, /*unset_as_null=*/!version1);
  if (!version1) embed_json_texts(j);
  if (rendering == DataRendering::kReaders) render_absent_schedule(j);
  return j;
}

nlohmann::json event_json(const fb::Event& e, DataRendering rendering) {
  nlohmann::json j;
  j["seq"] = e.seq();
  j["stream"] = e.stream() ? e.stream()->str() : "";
  j["version"] = e.stream_version();
  j["type"] = std::string(event_type_name(e.payload_type()));
  j["recorded_at"] = format_time_ms(e.recorded_at_ms());
  j["actor"] = e.actor() ? e.actor()->str() : "";
  j["command_id"] = e.command_id() ? e.command_id()->str() : "";
  j["data"] = event_data_json(e, rendering);
  return j;
}

}  // namespace runledger
