// SPDX-License-Identifier: Apache-2.0
#include "topology/nvidia_driver.hpp"

#include "os/host_files.hpp"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>

#include "core/base/numbers.hpp"

namespace sddp {
namespace {

constexpr std::size_t kMaxInfoFileBytes = 64 * 1024;  // the real file is ~400 bytes
constexpr std::size_t kMaxGpuDirs = 1024;

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool all_hex(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c));
    });
}

struct DirCloser {
    void operator()(DIR* d) const { closedir(d); }
};

}  // namespace

std::optional<std::string> normalize_pci_bus_id(std::string_view text) {
    text = trim(text);
    // From the right: function after '.', then device, bus, optional domain, colon-separated.
    const auto dot = text.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    const std::string_view func = text.substr(dot + 1);
    std::string_view head = text.substr(0, dot);
    const auto c2 = head.rfind(':');
    if (c2 == std::string_view::npos) return std::nullopt;
    const std::string_view dev = head.substr(c2 + 1);
    head = head.substr(0, c2);
    const auto c1 = head.rfind(':');
    const std::string_view bus = c1 == std::string_view::npos ? head : head.substr(c1 + 1);
    std::string_view domain = c1 == std::string_view::npos ? "0000" : head.substr(0, c1);
    while (domain.size() > 4 && domain.front() == '0') domain.remove_prefix(1);
    if (func.size() != 1 || func[0] < '0' || func[0] > '7' || dev.size() != 2 || bus.size() != 2 ||
        domain.size() != 4 || !all_hex(dev) || !all_hex(bus) || !all_hex(domain))
        return std::nullopt;
    std::string out = std::string(domain) + ":" + std::string(bus) + ":" + std::string(dev) + "." +
                      std::string(func);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

Result<NvidiaDriverGpu> parse_nvidia_gpu_information(std::string_view text,
                                                     std::string_view dir_name) {
    NvidiaDriverGpu gpu;
    std::optional<std::string> bus;
    bool have_minor = false;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view key = trim(line.substr(0, colon));
        const std::string_view value = trim(line.substr(colon + 1));
        if (key == "Device Minor") {
            const auto m = parse_decimal(value, 255);  // the driver's minors are 0..254
            if (!m) {
                return make_error(Errc::invalid_input,
                                  "nvidia driver info for " + std::string(dir_name) +
                                      ": Device Minor " + quote_value(value) + " is not a number");
            }
            gpu.minor = static_cast<int>(*m);
            have_minor = true;
        } else if (key == "GPU UUID") {
            gpu.uuid = std::string(value);
        } else if (key == "Bus Location") {
            bus = normalize_pci_bus_id(value);
        } else if (key == "Model") {
            gpu.model = std::string(value);
        }
    }
    if (!bus) bus = normalize_pci_bus_id(dir_name);
    if (!bus || !have_minor) {
        return make_error(Errc::invalid_input,
                          "nvidia driver info for " + quote_value(dir_name) +
                              ": no valid 'Bus Location' or 'Device Minor' line");
    }
    gpu.pci_bus_id = *bus;
    return gpu;
}

std::vector<NvidiaDriverGpu> read_nvidia_driver_gpus(const std::string& gpus_dir, int* skipped) {
    std::vector<NvidiaDriverGpu> out;
    int bad = 0;
    std::unique_ptr<DIR, DirCloser> dir(opendir(gpus_dir.c_str()));
    if (dir) {
        std::size_t seen = 0;
        while (const dirent* e = readdir(dir.get())) {
            const std::string name = e->d_name;
            if (name == "." || name == "..") continue;
            if (++seen > kMaxGpuDirs) break;
            const auto text =
                read_small_file(gpus_dir + "/" + name + "/information", kMaxInfoFileBytes);
            auto gpu = text ? parse_nvidia_gpu_information(*text, name)
                            : Result<NvidiaDriverGpu>(make_error(Errc::io, "unreadable"));
            if (gpu.ok())
                out.push_back(std::move(gpu.value()));
            else
                ++bad;
        }
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.pci_bus_id < b.pci_bus_id; });
    if (skipped != nullptr) *skipped = bad;
    return out;
}

void merge_driver_facts(GpuTopologyFacts& facts, const std::vector<NvidiaDriverGpu>& driver) {
    int next_index = 0;
    for (const auto& g : facts.gpus) next_index = std::max(next_index, g.index + 1);
    for (const auto& d : driver) {
        auto it = std::find_if(facts.gpus.begin(), facts.gpus.end(),
                               [&](const GpuFact& g) { return g.pci_bus_id == d.pci_bus_id; });
        if (it == facts.gpus.end()) {
            GpuFact g;
            g.index = next_index++;
            g.pci_bus_id = d.pci_bus_id;
            facts.gpus.push_back(g);
            it = facts.gpus.end() - 1;
        }
        it->minor = d.minor;
        it->uuid = d.uuid;
    }
}

}  // namespace sddp
