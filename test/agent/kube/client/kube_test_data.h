// Small builders for API server JSON used by the kube tests. Header-only; pure functions.
#pragma once

#include <string>

#include "agent/kube/client/kube_types.h"

namespace nodehook {

inline ResourceRef WidgetsRef() {
  ResourceRef r;
  r.group = "example.com";
  r.version = "v1";
  r.plural = "widgets";
  return r;
}

inline std::string WidgetJson(const std::string& name, const std::string& rv) {
  return R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":")" + name +
         R"(","namespace":"ns","uid":"uid-)" + name + R"(","resourceVersion":")" + rv + R"("}})";
}

inline std::string WidgetListJson(const std::string& rv, const std::string& continue_token,
                                  const std::string& items_csv) {
  return R"({"kind":"WidgetList","apiVersion":"example.com/v1","metadata":{"resourceVersion":")" +
         rv + R"(","continue":")" + continue_token + R"("},"items":[)" + items_csv + "]}";
}

// One watch line including its newline.
inline std::string EventLine(const std::string& type, const std::string& object_json) {
  return R"({"type":")" + type + R"(","object":)" + object_json + "}\n";
}

inline std::string ExpiredStatusJson() {
  return R"j({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)j"
         R"j("message":"too old resource version: 5 (90)","reason":"Expired","code":410})j";
}

}  // namespace nodehook
