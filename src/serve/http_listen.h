#pragma once
// What every strata HTTP server does around its routes (strata serve, strata explore): bind
// (port 0: any free one), say where it listens, serve until SIGTERM or SIGINT, stop cleanly.
#include <httplib.h>

#include <functional>
#include <string>

namespace strata::serve {

// SO_REUSEADDR only (the library's default SO_REUSEPORT would let a second server bind a
// port another one listens on and silently share its connections), and short timeouts.
void configure_http_server(httplib::Server& server);

// Statuses the library sets itself (404 for an unknown path, 413 for a body over the limit,
// which `body_limit_flag` raises) get a JSON body in OpenAI's error shape, as the routes' own
// errors; with `access_log`, one line per request on stderr: method, path, status, time.
void install_error_shapes_and_log(httplib::Server& server, const std::string& body_limit_flag, bool access_log);

// Binds host:port, calls on_listening(port) once connections are accepted, and serves until
// SIGTERM or SIGINT; then on_signal() runs (refuse new work, say) and the server stops.
// strata::Error naming `command` when the address cannot be bound or the server stops by
// itself.
void listen_until_signalled(httplib::Server& server, const std::string& command, const std::string& host, int port,
                            const std::function<void(int)>& on_listening, const std::function<void()>& on_signal);

}  // namespace strata::serve
