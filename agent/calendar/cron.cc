#include "agent/calendar/cron.h"

#include <cctype>
#include <sstream>
#include <vector>

namespace nodehook {
namespace {

struct FieldRule {
  const char* name;
  int min;
  int max;
  const char* const* names;  // names[i] is value min + i; nullptr = numbers only
  int name_count;
  const char* example;
};

const char* const kMonthNames[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                   "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
const char* const kDayNames[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

const FieldRule kFields[5] = {
    {"minute", 0, 59, nullptr, 0, "0, 30 or */15"},
    {"hour", 0, 23, nullptr, 0, "22 or 1-5"},
    {"day-of-month", 1, 31, nullptr, 0, "1, 1-7 or */2"},
    {"month", 1, 12, kMonthNames, 12, "1-12, JAN-DEC or *"},
    // 7 is Sunday too; the names stop at SAT (6).
    {"day-of-week", 0, 7, kDayNames, 7, "0-7 (0 and 7 are Sunday), SUN-SAT or MON-FRI"},
};

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string Expected(const FieldRule& rule) {
  std::string what = "expected *, a number from " + std::to_string(rule.min) + " to " + std::to_string(rule.max);
  if (rule.names != nullptr) what += " or a name";
  return what + ", a range a-b, a step */n or a-b/n, or a list of these separated by commas, e.g. " + rule.example;
}

// One number or name of the field; false when it is neither or out of range.
bool ReadValue(const std::string& token, const FieldRule& rule, int* out) {
  if (token.empty()) return false;
  if (rule.names != nullptr && std::isalpha(static_cast<unsigned char>(token[0]))) {
    std::string upper = Upper(token);
    for (int i = 0; i < rule.name_count; ++i) {
      if (upper == rule.names[i]) {
        *out = rule.min + i;
        return true;
      }
    }
    return false;
  }
  if (token.size() > 4) return false;
  int value = 0;
  for (char c : token) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + (c - '0');
  }
  if (value < rule.min || value > rule.max) return false;
  *out = value;
  return true;
}

// Sets the bits of one list item ("*", "a", "a-b", "*/n", "a-b/n") into `bits` (indexed by value).
Status ReadItem(const std::string& item, const FieldRule& rule, std::vector<bool>* bits) {
  auto problem = [&](const std::string& why) {
    return InvalidError(std::string(rule.name) + " field \"" + item + "\": " + why);
  };
  std::string range = item;
  int step = 1;
  size_t slash = item.find('/');
  if (slash != std::string::npos) {
    range = item.substr(0, slash);
    FieldRule step_rule{rule.name, 1, rule.max - rule.min + 1, nullptr, 0, ""};
    if (!ReadValue(item.substr(slash + 1), step_rule, &step)) {
      return problem("expected a step from 1 to " + std::to_string(step_rule.max) + " after /");
    }
  }
  int low = rule.min;
  int high = rule.max;
  if (range != "*") {
    size_t dash = range.find('-');
    if (!ReadValue(range.substr(0, dash), rule, &low)) return problem(Expected(rule));
    high = low;
    if (dash != std::string::npos && !ReadValue(range.substr(dash + 1), rule, &high)) return problem(Expected(rule));
    if (high < low) return problem("a range must go upwards (a-b with a <= b)");
    if (slash != std::string::npos && dash == std::string::npos) {
      return problem("a step needs * or a range before it, e.g. */15 or 0-30/10");
    }
  }
  for (int v = low; v <= high; v += step) (*bits)[v] = true;
  return Status::Ok();
}

Status ReadField(const std::string& text, const FieldRule& rule, std::vector<bool>* bits) {
  bits->assign(rule.max + 1, false);
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) return InvalidError(std::string(rule.name) + " field \"" + text + "\": " + Expected(rule));
    NODEHOOK_RETURN_IF_ERROR(ReadItem(item, rule, bits));
    if (comma == std::string::npos) return Status::Ok();
    start = comma + 1;
  }
}

template <size_t N>
void CopyBits(const std::vector<bool>& from, std::bitset<N>* to) {
  for (size_t i = 0; i < N && i < from.size(); ++i) (*to)[i] = from[i];
}

}  // namespace

bool CronSpec::MatchesDay(int year, int month, int day) const {
  if (!months[month]) return false;
  bool dom = days_of_month[day];
  bool dow = days_of_week[WeekdayFromDays(DaysFromCivil(year, month, day))];
  return day_of_month_star || day_of_week_star ? dom && dow : dom || dow;
}

bool CronSpec::Matches(const CivilTime& t) const {
  return minutes[t.minute] && hours[t.hour] && MatchesDay(t.year, t.month, t.day);
}

Result<CronSpec> ParseCron(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> fields;
  for (std::string field; in >> field;) fields.push_back(field);
  if (fields.size() != 5) {
    return InvalidError("expected 5 fields (minute hour day-of-month month day-of-week), e.g. \"0 22 * * 1-5\", got " +
                        std::to_string(fields.size()));
  }
  CronSpec spec;
  spec.text = text;
  std::vector<bool> bits[5];
  for (int i = 0; i < 5; ++i) NODEHOOK_RETURN_IF_ERROR(ReadField(fields[i], kFields[i], &bits[i]));
  CopyBits(bits[0], &spec.minutes);
  CopyBits(bits[1], &spec.hours);
  CopyBits(bits[2], &spec.days_of_month);
  CopyBits(bits[3], &spec.months);
  if (bits[4][7]) bits[4][0] = true;  // 7 is Sunday
  CopyBits(bits[4], &spec.days_of_week);
  spec.day_of_month_star = fields[2][0] == '*';
  spec.day_of_week_star = fields[4][0] == '*';
  return spec;
}

}  // namespace nodehook
