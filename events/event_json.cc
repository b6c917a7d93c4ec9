#include "events/event_json.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <flatbuffers/idl.h>

#include "base/time_text.h"
#include "events/event_codec.h"

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
