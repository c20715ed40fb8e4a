#include "agent/base/interned.h"

#include <set>
#include <string>

#include "agent/base/mutex.h"

namespace nodehook {

namespace {

const std::string& InternedCopy(std::string_view text) {
  static Mutex mu;
  // Never destroyed: views handed out may be read while static destructors run.
  static auto* texts = new std::set<std::string, std::less<>>();
  MutexLock lock(&mu);
  auto it = texts->find(text);
  if (it == texts->end()) it = texts->emplace(text).first;
  return *it;  // set elements do not move
}

}  // namespace

std::string_view Intern(std::string_view text) { return InternedCopy(text); }

InternedText::InternedText(std::string_view text) : text_(&InternedCopy(text)) {}

}  // namespace nodehook
