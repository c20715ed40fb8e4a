// Typed reads of RapidJSON values that turn every mismatch into a ConfigError naming the path,
// the line and what was expected. Internal to agent/config. Not synchronized.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/config/json_lines.h"

namespace nodehook {

// Collects problems; looks up the line of each path in the index.
class Diagnostics {
 public:
  Diagnostics(const JsonLineIndex* index, std::vector<ConfigError>* errors) : index_(index), errors_(errors) {}

  void Error(const std::string& path, std::string message);               // at the path's line
  void ErrorAtLine(const std::string& path, int line, std::string message);  // line 0 = not in the file
  int LineOf(const std::string& path) const { return index_ ? index_->LineOf(path) : 0; }

 private:
  const JsonLineIndex* index_;
  std::vector<ConfigError>* errors_;
};

// "null", "boolean", "object", "array", "string", "number".
const char* JsonTypeName(const rapidjson::Value& value);

// "expected an integer from 1 to 256"
std::string IntegerExpectation(int min, int max);
// What a JSON value that is not an int looks like in a message: "2.5", "1e+30", "9999999999", "string".
std::string DescribeNonInt(const rapidjson::Value& value);

// "create, update, delete"
std::string JoinNames(const std::vector<std::string>& names);

// Reports every key of `object` not in `allowed`. The caller has checked it is an object.
void ReportUnknownKeys(const rapidjson::Value& object, const std::string& path,
                       const std::vector<std::string>& allowed, Diagnostics& diag);

// Each returns false (after reporting) when the value does not have the expected shape.
bool ExpectObject(const rapidjson::Value& value, const std::string& path, Diagnostics& diag);
bool ReadString(const rapidjson::Value& value, const std::string& path, bool non_empty, std::string* out,
                Diagnostics& diag);
bool ReadBool(const rapidjson::Value& value, const std::string& path, bool* out, Diagnostics& diag);
// An integer from `min` to `max`; anything else is reported with the value and the range.
bool ReadIntInRange(const rapidjson::Value& value, const std::string& path, int min, int max, int* out,
                    Diagnostics& diag);
// A non-empty array of strings, each non-empty.
bool ReadStringList(const rapidjson::Value& value, const std::string& path, bool allow_empty_list,
                    std::vector<std::string>* out, Diagnostics& diag);

// The member named `key`, or nullptr.
const rapidjson::Value* FindMember(const rapidjson::Value& object, const char* key);

}  // namespace nodehook
