#include "agent/calendar/time_zone.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace nodehook {
namespace {

constexpr size_t kHeaderBytes = 44;
constexpr uint32_t kMaxCount = 1 << 20;  // far above any real zone; bounds what a bad file costs

// Big-endian reads over the file's bytes; any read past the end turns `ok` false.
class ByteReader {
 public:
  explicit ByteReader(const std::string& bytes) : b_(bytes) {}
  bool ok() const { return ok_; }
  size_t pos() const { return pos_; }
  void Seek(size_t pos) { pos_ = pos; ok_ = ok_ && pos <= b_.size(); }
  uint64_t Unsigned(int width) {
    if (!ok_ || pos_ + width > b_.size()) {
      ok_ = false;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < width; ++i) v = v << 8 | static_cast<unsigned char>(b_[pos_++]);
    return v;
  }
  int64_t Signed(int width) {
    uint64_t v = Unsigned(width);
    return width == 4 ? static_cast<int32_t>(static_cast<uint32_t>(v)) : static_cast<int64_t>(v);
  }
  std::string Bytes(size_t n) {
    if (!ok_ || pos_ + n > b_.size()) {
      ok_ = false;
      return "";
    }
    pos_ += n;
    return b_.substr(pos_ - n, n);
  }

 private:
  const std::string& b_;
  size_t pos_ = 0;
  bool ok_ = true;
};

struct Header {
  char version = 0;
  uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
  // Bytes of the data block that follows, with times `time_size` bytes wide.
  size_t DataBytes(int time_size) const {
    return size_t{timecnt} * time_size + timecnt + size_t{typecnt} * 6 + charcnt +
           size_t{leapcnt} * (time_size + 4) + isstdcnt + isutcnt;
  }
};

bool ReadHeader(ByteReader& in, Header* h) {
  if (in.Bytes(4) != "TZif") return false;
  h->version = static_cast<char>(in.Unsigned(1));
  (void)in.Bytes(15);  // reserved
  h->isutcnt = static_cast<uint32_t>(in.Unsigned(4));
  h->isstdcnt = static_cast<uint32_t>(in.Unsigned(4));
  h->leapcnt = static_cast<uint32_t>(in.Unsigned(4));
  h->timecnt = static_cast<uint32_t>(in.Unsigned(4));
  h->typecnt = static_cast<uint32_t>(in.Unsigned(4));
  h->charcnt = static_cast<uint32_t>(in.Unsigned(4));
  return in.ok() && h->typecnt >= 1 && h->charcnt >= 1 && h->timecnt < kMaxCount && h->typecnt <= 256 &&
         h->charcnt < kMaxCount && h->leapcnt < kMaxCount && h->isstdcnt <= h->typecnt && h->isutcnt <= h->typecnt;
}

bool ValidName(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.back() == '/') return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '/' && c != '_' && c != '+' && c != '-') return false;
  }
  std::string part;
  std::istringstream parts(name);
  while (std::getline(parts, part, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

}  // namespace

TimeZone TimeZone::Utc() {
  TimeZone zone;
  zone.name_ = "UTC";
  zone.types_.push_back(Type{0, false, "UTC"});
  return zone;
}

Result<TimeZone> TimeZone::FromTzif(const std::string& name, const std::string& bytes) {
  auto bad = [&](const std::string& why) { return InvalidError("time zone " + name + ": " + why); };
  ByteReader in(bytes);
  Header h;
  if (!ReadHeader(in, &h)) return bad("not a TZif file (RFC 8536)");
  int time_size = 4;
  if (h.version >= '2') {
    // Skip the 32-bit block: the 64-bit one after the second header covers all times.
    in.Seek(kHeaderBytes + h.DataBytes(4));
    if (!ReadHeader(in, &h)) return bad("damaged TZif file: no second header in a version 2+ file");
    time_size = 8;
  }
  if (h.leapcnt > 0) return bad("the file counts leap seconds (a \"right/\" zone); use the zone without them");
  TimeZone zone;
  zone.name_ = name;
  for (uint32_t i = 0; i < h.timecnt; ++i) zone.transitions_.push_back(in.Signed(time_size));
  for (uint32_t i = 0; i < h.timecnt; ++i) zone.type_indices_.push_back(static_cast<uint8_t>(in.Unsigned(1)));
  std::vector<uint8_t> abbreviation_index;
  for (uint32_t i = 0; i < h.typecnt; ++i) {
    Type type;
    type.offset = static_cast<int>(in.Signed(4));
    type.dst = in.Unsigned(1) != 0;
    abbreviation_index.push_back(static_cast<uint8_t>(in.Unsigned(1)));
    zone.types_.push_back(type);
  }
  std::string chars = in.Bytes(h.charcnt);
  (void)in.Bytes(h.isstdcnt + h.isutcnt);  // only matter for POSIX-rule fallbacks zic already applied
  if (!in.ok()) return bad("damaged TZif file: shorter than its header says");
  for (uint32_t i = 0; i < h.typecnt; ++i) {
    if (abbreviation_index[i] >= chars.size()) return bad("damaged TZif file: abbreviation index out of range");
    const size_t nul = chars.find('\0', abbreviation_index[i]);  // each ends at a NUL
    zone.types_[i].abbreviation =
        chars.substr(abbreviation_index[i], nul == std::string::npos ? std::string::npos : nul - abbreviation_index[i]);
    if (zone.types_[i].offset < -26 * 3600 || zone.types_[i].offset > 26 * 3600) return bad("offset out of range");
  }
  for (uint32_t i = 0; i < h.timecnt; ++i) {
    if (zone.type_indices_[i] >= h.typecnt) return bad("damaged TZif file: type index out of range");
    if (i > 0 && zone.transitions_[i] <= zone.transitions_[i - 1]) return bad("damaged TZif file: unsorted times");
  }
  if (time_size == 8) {
    // The footer: "\n" TZ-string "\n"; an empty string means no rule after the last transition.
    if (in.Bytes(1) != "\n") return bad("damaged TZif file: no footer");
    std::string footer;
    for (std::string c = in.Bytes(1); in.ok() && c != "\n"; c = in.Bytes(1)) footer += c;
    if (!in.ok()) return bad("damaged TZif file: unterminated footer");
    if (!footer.empty()) {
      Result<PosixTzRule> rule = ParsePosixTz(footer);
      if (!rule.ok()) return bad(rule.status().message());
      zone.footer_ = std::move(rule).value();
    }
  }
  return zone;
}

TimeZone::Info TimeZone::InfoAt(int64_t unix_seconds) const {
  auto from_type = [](const Type& t) { return Info{t.offset, t.dst, &t.abbreviation}; };
  auto from_rule = [&]() {
    PosixTzRule::Local local = footer_->At(unix_seconds);
    return Info{local.offset, local.dst, local.abbreviation};
  };
  if (transitions_.empty()) return footer_ ? from_rule() : from_type(types_[0]);
  if (unix_seconds < transitions_.front()) return from_type(types_[0]);
  size_t i = std::upper_bound(transitions_.begin(), transitions_.end(), unix_seconds) - transitions_.begin() - 1;
  if (i + 1 == transitions_.size() && footer_) return from_rule();
  return from_type(types_[type_indices_[i]]);
}

int TimeZone::OffsetAt(int64_t unix_seconds) const { return InfoAt(unix_seconds).offset; }

LocalTime TimeZone::ToCivil(int64_t unix_seconds) const {
  Info info = InfoAt(unix_seconds);
  return LocalTime{CivilFromSeconds(unix_seconds + info.offset), info.offset, info.dst, *info.abbreviation};
}

int64_t TimeZone::FromCivil(const CivilTime& civil) const {
  const int64_t local = SecondsFromCivil(civil);
  // The offsets that can be in force near `local`: probed two days either side (offsets stay
  // within +-26 h) and at the instants those offsets give.
  std::vector<int> offsets = {OffsetAt(local - 2 * kSecondsPerDay), OffsetAt(local + 2 * kSecondsPerDay)};
  for (int o : std::vector<int>(offsets)) offsets.push_back(OffsetAt(local - o));
  std::optional<int64_t> exact;
  std::optional<int64_t> before;  // an instant whose wall clock is still before `civil`
  std::optional<int64_t> after;   // ...and one whose wall clock is already past it
  for (int o : offsets) {
    const int64_t t = local - o;
    const int64_t shown = t + OffsetAt(t);
    if (shown == local) exact = exact ? std::min(*exact, t) : t;
    if (shown < local) before = before ? std::max(*before, t) : t;
    if (shown > local) after = after ? std::min(*after, t) : t;
  }
  if (exact) return *exact;
  if (!before || !after || *before > *after) return local - offsets[0];  // not seen in real zones
  // A gap: the first instant in (before, after] whose wall clock is at or past `civil`.
  int64_t lo = *before;
  int64_t hi = *after;
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    (mid + OffsetAt(mid) >= local ? hi : lo) = mid;
  }
  return hi;
}

Result<TimeZone> LoadTimeZone(const std::string& name, const std::string& zoneinfo_dir) {
  if (name == "UTC") return TimeZone::Utc();
  if (!ValidName(name)) {
    return InvalidError("time zone \"" + name + "\": expected an IANA name such as Europe/Berlin (letters, digits "
                        "and /_+-, no \"..\" part, not absolute)");
  }
  const std::string path = zoneinfo_dir + "/" + name;
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFoundError("unknown time zone \"" + name + "\": no file " + path);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  // A directory ("Europe") opens but reads nothing.
  if (bytes.str().empty()) return NotFoundError("unknown time zone \"" + name + "\": " + path + " is not a zone file");
  return TimeZone::FromTzif(name, bytes.str());
}

}  // namespace nodehook
