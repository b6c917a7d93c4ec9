#include "base/number_overflow.h"

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

namespace runledger {
namespace {

// A SAX pass that keeps the path to the value being read and, when the
// parser stops at a number it cannot hold, remembers that path.
class PathTracker {
 public:
  using json = nlohmann::json;

  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(json::number_integer_t) { return value(); }
  bool number_unsigned(json::number_unsigned_t) { return value(); }
  bool number_float(json::number_float_t, const json::string_t&) { return value(); }
  bool string(json::string_t&) { return value(); }
  bool binary(json::binary_t&) { return value(); }
  bool start_object(std::size_t) {
    enter_value();
    frames_.push_back(Frame{true, {}, 0, false});
    return true;
  }
  bool key(json::string_t& k) {
    frames_.back().key = k;
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    enter_value();
    frames_.push_back(Frame{false, {}, 0, false});
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    // 406: "number overflow"; the value it stopped at is the next one of
    // the innermost container. A body that is not an object has no fields.
    if (e.id == 406 && !frames_.empty() && frames_.front().object) {
      enter_value();
      path_ = path();
    }
    return false;
  }

  const std::optional<std::string>& found() const { return path_; }

 private:
  struct Frame {
    bool object;
    std::string key;  // objects: the key of the value being read
    size_t index;     // arrays: the index of the value being read
    bool started;     // arrays: a value was read already
  };

  bool value() {
    enter_value();
    return true;
  }
  // An array's next element moves its index on.
  void enter_value() {
    if (frames_.empty() || frames_.back().object) return;
    Frame& f = frames_.back();
    if (f.started) ++f.index;
    f.started = true;
  }
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.object) {
        if (!p.empty()) p += '.';
        p += f.key;
      } else {
        p += '[' + std::to_string(f.index) + ']';
      }
    }
    return p;
  }

  std::vector<Frame> frames_;
  std::optional<std::string> path_;
};

}  // namespace

std::optional<std::string> overflowing_number_path(std::string_view body) {
  PathTracker tracker;
  nlohmann::json::sax_parse(body, &tracker, nlohmann::json::input_format_t::json,
                            /*strict=*/true);
  return tracker.found();
}

}  // namespace runledger
