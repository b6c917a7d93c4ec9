// The one list of event types (projections/event_types.h): every type of the
// schema under exactly one entity, and the name check of the `type` filters
// (events/event_codec.h) knowing each type and nothing else.
#include "projections/event_types.h"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "events/event_codec.h"

namespace runledger {
namespace {

TEST(EventTypes, EachTypeOfTheSchemaIsListedOnceUnderOneEntity) {
  for (fb::Payload t : fb::EnumValuesPayload()) {
    if (t == fb::Payload::NONE) {
      EXPECT_FALSE(event_stream_kind(t).has_value());
      EXPECT_EQ(std::count(std::begin(kEventTypes), std::end(kEventTypes), t), 0);
      continue;
    }
    EXPECT_TRUE(event_stream_kind(t).has_value()) << event_type_name(t);
    EXPECT_EQ(std::count(std::begin(kEventTypes), std::end(kEventTypes), t), 1)
        << event_type_name(t);
  }
}

TEST(EventTypes, EachTypeBelongsToTheEntityItsNameSays) {
  EXPECT_EQ(event_stream_kind(fb::Payload::JobEnqueued), StreamKind::kJob);
  EXPECT_EQ(event_stream_kind(fb::Payload::AttemptYielded), StreamKind::kJob);
  EXPECT_EQ(event_stream_kind(fb::Payload::ConnectorCreated), StreamKind::kConnector);
  EXPECT_EQ(event_stream_kind(fb::Payload::ScheduleGap), StreamKind::kConnector);
  EXPECT_EQ(event_stream_kind(fb::Payload::HoldPlaced), StreamKind::kHold);
  EXPECT_EQ(event_stream_kind(fb::Payload::HoldReleased), StreamKind::kHold);
}

TEST(EventTypeNames, TheFilterCheckKnowsEveryTypeAndNothingElse) {
  for (fb::Payload t : kEventTypes) {
    EXPECT_TRUE(is_event_type_name(event_type_name(t))) << event_type_name(t);
  }
  for (const char* name : {"", "NONE", "jobenqueued", "JobEnqueued ", "Job", "HoldPlaced2"}) {
    EXPECT_FALSE(is_event_type_name(name)) << '"' << name << '"';
  }
}

}  // namespace
}  // namespace runledger
