#include "agent/http/kept_server.h"

#include "agent/base/log.h"

namespace nodehook {

KeptServer::KeptServer(std::string name, std::string address, LocalServerOptions options, Setup setup, Verify verify)
    : name_(std::move(name)),
      address_(std::move(address)),
      options_(std::move(options)),
      setup_(std::move(setup)),
      verify_(std::move(verify)) {}

Result<std::unique_ptr<KeptServer>> KeptServer::Start(std::string name, std::string address,
                                                      LocalServerOptions options, Setup setup, Verify verify) {
  std::unique_ptr<KeptServer> kept(
      new KeptServer(std::move(name), std::move(address), std::move(options), std::move(setup), std::move(verify)));
  Status listening = kept->Listen();
  if (listening.code() == StatusCode::kInvalid) return listening;
  if (!listening.ok()) {
    Log(LogLevel::kWarn, kept->name_ + " not listening",
        {{"address", kept->address_}, {"error", listening.ToString()},
         {"next", "try again every 2s (another copy on this node may hold the port)"}});
    kept->retry_thread_ = std::thread([k = kept.get()] { k->KeepTrying(); });
  }
  return kept;
}

Status KeptServer::Listen() {
  auto server = std::make_unique<LocalServer>(options_);
  setup_(*server);
  NODEHOOK_RETURN_IF_ERROR(server->Start());
  if (verify_) {
    Status vetted = verify_(*server);
    if (!vetted.ok()) return InvalidError(vetted.message());
  }
  std::string bound;
  for (const std::string& b : server->listening()) bound += (bound.empty() ? "" : " ") + b;
  Log(LogLevel::kInfo, name_ + " listening",
      {{"address", address_}, {"bound", bound}, {"port", server->port()}, {"next", "serve requests"}});
  MutexLock lock(&mu_);
  server_ = std::move(server);
  return Status::Ok();
}

void KeptServer::KeepTrying() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    bool stopping = mu_.WaitWith([&](std::unique_lock<std::mutex>& held) {
      return stop_cv_.wait_for(held, std::chrono::seconds(2), [this] {
        mu_.AssertHeld();
        return stopping_;
      });
    });
    if (stopping) return;
    Status st;
    {
      MutexUnlock unlock(&mu_);
      st = Listen();
    }
    if (st.ok()) return;
    if (st.code() == StatusCode::kInvalid) {
      Log(LogLevel::kError, name_ + " refused", {{"address", address_}, {"error", st.ToString()}, {"next", "stay off"}});
      return;
    }
  }
}

int KeptServer::port() const {
  MutexLock lock(&mu_);
  return server_ ? server_->port() : 0;
}

KeptServer::~KeptServer() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (retry_thread_.joinable()) retry_thread_.join();
  if (server_) server_->Stop();
}

}  // namespace nodehook
