// A minimal streaming JSON writer (objects, arrays, strings, raw numbers/bools) with
// correct string escaping, so every --json output is valid JSON.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace ufi_info {

class JsonWriter {
public:
    explicit JsonWriter(FILE *out) : out_(out) {}

    void begin_object();
    void end_object();
    void begin_array();
    void end_array();
    void key(std::string_view k);
    void string(std::string_view s);
    void raw(std::string_view literal);  // a number, true, false or null, written as is
    void string_array(const std::vector<std::string> &items);
    void finish();  // trailing newline

private:
    void separator();
    FILE *out_;
    std::vector<bool> first_;  // per open container: no element written yet
    bool after_key_ = false;
};

std::string json_escape(std::string_view s);

}  // namespace ufi_info
