#include "http_listen.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <thread>

#include "strata/core/error.h"
#include "strata/serve/openai_protocol.h"

namespace strata::serve {

namespace {

// SIGTERM and SIGINT, turned into a byte on a pipe that a watcher thread reads: a handler may
// run on any thread (libtorch's and OpenMP's included) and may only do async-signal-safe work.
int g_signal_pipe[2] = {-1, -1};

extern "C" void on_shutdown_signal(int) {
  const char byte = 's';
  [[maybe_unused]] const ssize_t written = ::write(g_signal_pipe[1], &byte, 1);
}

class ShutdownSignals {
 public:
  ShutdownSignals() {
    if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0) throw Error("serve: cannot create the signal pipe");
    struct sigaction action {};
    action.sa_handler = on_shutdown_signal;
    sigemptyset(&action.sa_mask);
    for (int signal : {SIGTERM, SIGINT}) ::sigaction(signal, &action, &previous_[signal == SIGINT]);
  }
  ~ShutdownSignals() {
    for (int signal : {SIGTERM, SIGINT}) ::sigaction(signal, &previous_[signal == SIGINT], nullptr);
    ::close(g_signal_pipe[0]);
    ::close(g_signal_pipe[1]);
  }
  // Blocks until a signal arrives or wake() is called.
  void wait() {
    char byte;
    while (::read(g_signal_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
  }
  void wake() { on_shutdown_signal(0); }

 private:
  struct sigaction previous_[2];
};

using Clock = std::chrono::steady_clock;
thread_local Clock::time_point t_request_start;

}  // namespace

void install_error_shapes_and_log(httplib::Server& server, const std::string& body_limit_flag, bool access_log) {
  server.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    t_request_start = Clock::now();
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_error_handler(
      httplib::Server::HandlerWithResponse([body_limit_flag](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        const std::string message =
            res.status == 404   ? fmt::format("no route {} {}", req.method, req.path)
            : res.status == 413 ? fmt::format("the request body is over the server's limit ({})", body_limit_flag)
                                : fmt::format("HTTP {}", res.status);
        res.set_content(error_body(ApiError(res.status, "invalid_request_error", message)).dump(), "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }));
  if (access_log)
    server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t_request_start).count();
      std::fprintf(stderr, "%s %s %d %.0f ms\n", req.method.c_str(), req.path.c_str(), res.status, ms);
    });
}

void configure_http_server(httplib::Server& server) {
  server.set_socket_options([](int socket) {
    const int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.set_keep_alive_timeout(2);
  server.set_read_timeout(30, 0);
  server.set_write_timeout(30, 0);
}

void listen_until_signalled(httplib::Server& server, const std::string& command, const std::string& host, int port,
                            const std::function<void(int)>& on_listening, const std::function<void()>& on_signal) {
  const int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0)
    throw Error(fmt::format("{}: cannot listen on {}:{} (in use, or not an address of this machine)", command, host, port));
  ShutdownSignals signals;
  std::atomic<bool> signalled = false;
  std::thread watcher([&] {
    signals.wait();
    signalled = true;
    on_signal();
    server.stop();
  });
  on_listening(bound);
  std::fflush(stdout);
  server.listen_after_bind();
  const bool by_signal = signalled;
  if (!by_signal) signals.wake();
  watcher.join();
  if (!by_signal) throw Error(command + ": the server stopped listening unexpectedly");
  std::fprintf(stderr, "strata %s: shut down cleanly\n", command.c_str());
}

}  // namespace strata::serve
