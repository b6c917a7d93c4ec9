// A small validator of replies against the OpenAPI document the server serves
// (GET /v1/openapi.json): the response of a path, method and status, and the
// JSON Schema keywords the document uses ($ref, type, enum, properties,
// required, additionalProperties, items, oneOf, minimum, maximum, minLength,
// maxLength). Strings are measured in bytes, enough for the ASCII of replies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace runledger::testing {

class OpenApiDocument {
 public:
  explicit OpenApiDocument(nlohmann::json doc) : doc_(std::move(doc)) {}

  const nlohmann::json& json() const { return doc_; }

  // What is wrong with a reply of `status` and `body` to `method` (lower
  // case) on the document's path `pattern`; empty when it is as documented.
  // `body` is null for a reply without one.
  std::vector<std::string> check_reply(const std::string& method, const std::string& pattern,
                                       int status, const nlohmann::json& body) const {
    std::vector<std::string> errors;
    const std::string where = method + " " + pattern + " " + std::to_string(status);
    if (!doc_.at("paths").contains(pattern) || !doc_["paths"][pattern].contains(method)) {
      return {where + ": no such operation in the document"};
    }
    const auto& responses = doc_["paths"][pattern][method].at("responses");
    const std::string code = std::to_string(status);
    if (!responses.contains(code)) return {where + ": status not in the document"};
    const nlohmann::json& response = resolve(responses[code]);
    if (!response.contains("content")) {
      if (!body.is_null()) errors.push_back(where + ": a body where the document has none");
      return errors;
    }
    if (!response["content"].contains("application/json")) return errors;
    if (body.is_null()) return {where + ": no JSON body"};
    validate(response["content"]["application/json"].at("schema"), body, where + " $", errors);
    return errors;
  }

 private:
  const nlohmann::json& resolve(const nlohmann::json& node) const {
    if (!node.is_object() || !node.contains("$ref")) return node;
    std::string ref = node["$ref"].get<std::string>();
    return resolve(doc_.at(nlohmann::json::json_pointer(ref.substr(1))));
  }

  static bool has_type(const nlohmann::json& value, const std::string& type) {
    if (type == "null") return value.is_null();
    if (type == "object") return value.is_object();
    if (type == "array") return value.is_array();
    if (type == "string") return value.is_string();
    if (type == "boolean") return value.is_boolean();
    if (type == "integer") return value.is_number_integer();
    if (type == "number") return value.is_number();
    return false;
  }

  void validate(const nlohmann::json& node, const nlohmann::json& value, const std::string& at,
                std::vector<std::string>& errors) const {
    const nlohmann::json& schema = resolve(node);
    if (schema.contains("oneOf")) {
      int matches = 0;
      for (const auto& alternative : schema["oneOf"]) {
        std::vector<std::string> e;
        validate(alternative, value, at, e);
        if (e.empty()) ++matches;
      }
      if (matches != 1) {
        errors.push_back(at + ": matches " + std::to_string(matches) +
                         " of oneOf: " + value.dump());
      }
    }
    if (schema.contains("type")) {
      bool ok = false;
      if (schema["type"].is_array()) {
        for (const auto& t : schema["type"]) ok = ok || has_type(value, t.get<std::string>());
      } else {
        ok = has_type(value, schema["type"].get<std::string>());
      }
      if (!ok) {
        errors.push_back(at + ": " + value.dump() + " is not of type " + schema["type"].dump());
        return;
      }
    }
    if (schema.contains("enum")) {
      bool found = false;
      for (const auto& e : schema["enum"]) found = found || e == value;
      if (!found)
        errors.push_back(at + ": " + value.dump() + " is not in " + schema["enum"].dump());
    }
    if (value.is_number()) {
      if (schema.contains("minimum") && value.get<double>() < schema["minimum"].get<double>()) {
        errors.push_back(at + ": below minimum");
      }
      if (schema.contains("maximum") && value.get<double>() > schema["maximum"].get<double>()) {
        errors.push_back(at + ": above maximum");
      }
    }
    if (value.is_string()) {
      const size_t n = value.get<std::string>().size();
      if (schema.contains("minLength") && n < schema["minLength"].get<size_t>()) {
        errors.push_back(at + ": shorter than minLength");
      }
      if (schema.contains("maxLength") && n > schema["maxLength"].get<size_t>()) {
        errors.push_back(at + ": longer than maxLength");
      }
    }
    if (value.is_object()) {
      const nlohmann::json props = schema.value("properties", nlohmann::json::object());
      for (const auto& name : schema.value("required", nlohmann::json::array())) {
        if (!value.contains(name.get<std::string>())) {
          errors.push_back(at + ": lacks required " + name.get<std::string>());
        }
      }
      for (const auto& [name, v] : value.items()) {
        if (props.contains(name)) {
          validate(props[name], v, at + "." + name, errors);
        } else if (schema.contains("additionalProperties") &&
                   schema["additionalProperties"] == false) {
          errors.push_back(at + ": field '" + name + "' is not in the document");
        }
      }
    }
    if (value.is_array() && schema.contains("items")) {
      for (size_t i = 0; i < value.size(); ++i) {
        validate(schema["items"], value[i], at + "[" + std::to_string(i) + "]", errors);
      }
    }
  }

  nlohmann::json doc_;
};

}  // namespace runledger::testing
