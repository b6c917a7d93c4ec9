// The one list of event types (projections/event_types.h): every type of the
// schema under exactly one entity, the name check of the `type` filters
// (events/event_codec.h) knowing each type and nothing else, and the
// console's copy of the list agreeing with it.
#include "projections/event_types.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "events/event_codec.h"
#include "tests/support/test_support.h"

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

// The console's filter of the events page (ui/src/pages.jsx, `TYPES`) is
// the one copy outside C++: it must offer every type, in the list's order.
TEST(EventTypeNames, TheConsolesTypeFilterOffersEveryTypeInTheListsOrder) {
  std::ifstream in(testing::source_path("ui/src/pages.jsx"));
  ASSERT_TRUE(in) << "ui/src/pages.jsx";
  std::stringstream text;
  text << in.rdbuf();
  const std::string page = text.str();
  std::smatch list;
  ASSERT_TRUE(std::regex_search(page, list, std::regex(R"(const TYPES = \[([^\]]*)\])")))
      << "no `const TYPES = [...]` in pages.jsx";
  std::vector<std::string> offered;
  const std::string items = list[1].str();
  const std::regex quoted("'([A-Za-z]+)'");
  for (auto it = std::sregex_iterator(items.begin(), items.end(), quoted);
       it != std::sregex_iterator(); ++it) {
    offered.push_back((*it)[1].str());
  }
  std::vector<std::string> listed;
  for (fb::Payload t : kEventTypes) listed.emplace_back(event_type_name(t));
  EXPECT_EQ(offered, listed);
}

}  // namespace
}  // namespace runledger
