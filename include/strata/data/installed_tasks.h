#pragma once
// Two tasks of the Debian suite made from what is installed on this machine rather than from
// the archive's indexes (thesis ch. 3's man-page and transfer tasks):
//   man-section    a chunk of a rendered man page -> its section, 1-8 (pages under
//                  ROOT/usr/share/man/man1..man8; aliases and links skipped)
//   header-section a C/C++ header's code (comments dropped) -> the Section of the package that
//                  installed it (ROOT/var/lib/dpkg/info/*.list, files under /usr/include), at
//                  most `per_package` headers a package: the held-out transfer task
// Each example keeps `words` words. Splits come from a hash of the page's name or the owning
// source package's, as the other tasks' (about 90/5/5).
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace strata {

struct InstalledExample {
  std::string split, id, text, label;
};

std::vector<InstalledExample> man_section_examples(const std::filesystem::path& root, std::size_t words);

// sections / sources: package name -> its Section / its source package (from the archive's
// index); headers of packages the index does not know are skipped.
std::vector<InstalledExample> header_section_examples(const std::filesystem::path& root,
                                                      const std::map<std::string, std::string>& sections,
                                                      const std::map<std::string, std::string>& sources,
                                                      std::size_t words, std::size_t per_package);

// The installed package (dpkg's name, without ":arch") that owns each of `paths` (absolute, as
// dpkg lists them: "/usr/share/man/man1/ls.1.gz"), read from ROOT/var/lib/dpkg/info/*.list;
// paths no list names are left out of the result.
std::map<std::string, std::string> dpkg_owners(const std::filesystem::path& root,
                                               const std::vector<std::string>& paths);

}  // namespace strata
