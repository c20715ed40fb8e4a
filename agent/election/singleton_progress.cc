#include "agent/election/singleton_progress.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "agent/config/config.h"

namespace nodehook {

std::string SingletonHandledDigest(const std::string& object_json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(object_json.c_str(), object_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return "";
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) return "";
  auto annotations = meta->value.FindMember("annotations");
  if (annotations == meta->value.MemberEnd() || !annotations->value.IsObject()) return "";
  auto digest = annotations->value.FindMember(kSingletonHandledAnnotation);
  if (digest == annotations->value.MemberEnd() || !digest->value.IsString()) return "";
  return std::string(digest->value.GetString(), digest->value.GetStringLength());
}

std::string SingletonHandledPatch(const std::string& digest) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.Key("annotations");
  w.StartObject();
  w.Key(kSingletonHandledAnnotation);
  w.String(digest.c_str(), static_cast<rapidjson::SizeType>(digest.size()));
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace nodehook
