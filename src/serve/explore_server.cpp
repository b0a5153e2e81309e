#include "strata/serve/explore_server.h"

#include <httplib.h>

#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <string_view>

#include "strata/analysis/explorer.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/strings.h"
#include "strata/serve/openai_protocol.h"
#include "explore_assets.h"
#include "http_listen.h"

namespace strata::serve {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

class Forbidden : public Error {
 public:
  using Error::Error;
};

void send(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send(res, status, error_body(ApiError(status, status >= 500 ? "server_error" : "invalid_request_error", message)));
}

// Runs a route, answering every failure as JSON with its status.
void guarded(httplib::Response& res, const std::function<void()>& route) {
  try {
    route();
  } catch (const analysis::ExploreError& e) {
    send_error(res, e.status(), e.what());
  } catch (const Forbidden& e) {
    send_error(res, 403, e.what());
  } catch (const Error& e) {
    send_error(res, 400, e.what());
  } catch (const Json::exception& e) {
    send_error(res, 400, std::string("the body is not the JSON expected: ") + e.what());
  } catch (const std::exception& e) {
    send_error(res, 500, std::string("internal error: ") + e.what());
  }
}

std::optional<std::int64_t> int_param(const httplib::Request& req, const char* name) {
  if (!req.has_param(name)) return std::nullopt;
  const std::string text = req.get_param_value(name);
  if (const std::optional<std::int64_t> value = parse_int64(text)) return value;
  throw analysis::ExploreError(400, fmt::format("{} = '{}' is not an integer", name, text));
}

std::string required_param(const httplib::Request& req, const char* name) {
  if (!req.has_param(name)) throw analysis::ExploreError(400, fmt::format("the parameter '{}' is missing", name));
  return req.get_param_value(name);
}

std::string string_field(const Json& body, const char* name) {
  if (!body.contains(name) || body[name].is_null()) return "";
  if (!body[name].is_string()) throw analysis::ExploreError(400, fmt::format("\"{}\" must be a string", name));
  return body[name].get<std::string>();
}

class Routes {
 public:
  Routes(analysis::Explorer& explorer, const ExploreServerOptions& options) : explorer_(explorer), options_(options) {}

  void install(httplib::Server& server) {
    for (const ExploreAsset& asset : explore_assets())
      server.Get(asset.path, [&asset](const httplib::Request&, httplib::Response& res) {
        res.set_content(std::string(asset.body), asset.content_type);
      });
    server.Get("/api/runs", [this](const httplib::Request&, httplib::Response& res) {
      guarded(res, [&] {
        Json body = explorer_.runs();
        Json roots = Json::array();
        for (const fs::path& root : options_.roots) roots.push_back(root.string());
        body["roots"] = roots;
        body["max_body_bytes"] = options_.max_body_bytes;
        send(res, 200, body);
      });
    });
    server.Post("/api/documents", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] { send(res, 200, post_document(req)); });
    });
    server.Get(R"(/api/documents/([A-Za-z0-9]+))", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] { send(res, 200, explorer_.document(req.matches[1])); });
    });
    server.Get("/api/attention", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        analysis::AttentionQuery query;
        query.run = required_param(req, "run");
        query.doc = required_param(req, "doc");
        query.layer = int_param(req, "layer").value_or(0);
        if (req.get_param_value("head") != "mean") query.head = int_param(req, "head");
        query.q0 = int_param(req, "q0");
        query.q1 = int_param(req, "q1");
        query.k0 = int_param(req, "k0");
        query.k1 = int_param(req, "k1");
        query.max_cells = int_param(req, "max").value_or(256);
        send(res, 200, explorer_.attention(query));
      });
    });
    server.Get("/api/biases", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] { send(res, 200, explorer_.biases(required_param(req, "run"), required_param(req, "doc"))); });
    });
    server.Get("/api/analyses", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] { send(res, 200, explorer_.analyses(required_param(req, "run"))); });
    });
  }

 private:
  Json post_document(const httplib::Request& req) {
    const Json body = Json::parse(req.body);
    if (!body.is_object()) throw analysis::ExploreError(400, "the body must be a JSON object with \"text\" or \"path\"");
    const std::string format = string_field(body, "format");
    const std::string path = string_field(body, "path");
    if (!path.empty()) {
      fs::path file;
      try {
        file = allowed_path(path, options_.roots);
      } catch (const Error& e) {
        throw Forbidden(e.what());
      }
      std::error_code error;
      const std::uintmax_t size = fs::file_size(file, error);
      if (error || size > options_.max_body_bytes)
        throw analysis::ExploreError(413, fmt::format("{} is over the server's limit of {} bytes (strata explore "
                                                      "--max-body-bytes)", file.string(), options_.max_body_bytes));
      return explorer_.add_document(read_maybe_gzip(file), format, file.filename().string(), file.string());
    }
    if (!body.contains("text")) throw analysis::ExploreError(400, "the body needs \"text\" (the document) or \"path\"");
    const std::string text = string_field(body, "text");
    return explorer_.add_document(text, format, string_field(body, "name"));
  }

  analysis::Explorer& explorer_;
  const ExploreServerOptions& options_;
};

}  // namespace

fs::path allowed_path(const std::string& requested, const std::vector<fs::path>& roots) {
  if (roots.empty()) throw Error("this server reads no server-side file: start it with --root DIR");
  if (requested.empty()) throw Error("\"path\" is empty");
  std::error_code error;
  const fs::path asked = fs::path(requested).is_absolute() ? fs::path(requested) : roots.front() / requested;
  const fs::path file = fs::canonical(asked, error);
  if (error) throw Error(fmt::format("{}: no such file under the allowed roots", requested));
  for (const fs::path& root : roots) {
    const fs::path base = fs::canonical(root, error);
    if (error) continue;
    const fs::path relative = file.lexically_relative(base);
    if (!relative.empty() && *relative.begin() != ".." && relative != ".") {
      if (!fs::is_regular_file(file, error)) throw Error(fmt::format("{}: not a regular file", requested));
      return file;
    }
  }
  throw Error(fmt::format("{}: outside the allowed roots (strata explore --root)", requested));
}

void explore(analysis::Explorer& explorer, const ExploreServerOptions& options) {
  Routes routes(explorer, options);
  httplib::Server server;
  server.set_payload_max_length(options.max_body_bytes);
  configure_http_server(server);
  install_error_shapes_and_log(server, "strata explore --max-body-bytes", options.access_log);
  routes.install(server);
  listen_until_signalled(
      server, "explore", options.host, options.port,
      [&](int port) { std::printf("strata explore: listening on http://%s:%d\n", options.host.c_str(), port); },
      [] {});
}

}  // namespace strata::serve
