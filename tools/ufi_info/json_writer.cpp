#include "tools/ufi_info/json_writer.h"

namespace ufi_info {

std::string json_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    snprintf(buf, sizeof(buf), "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out;
}

void JsonWriter::separator() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) fputc(',', out_);
        first_.back() = false;
    }
}

void JsonWriter::begin_object() {
    separator();
    fputc('{', out_);
    first_.push_back(true);
}

void JsonWriter::end_object() {
    first_.pop_back();
    fputc('}', out_);
}

void JsonWriter::begin_array() {
    separator();
    fputc('[', out_);
    first_.push_back(true);
}

void JsonWriter::end_array() {
    first_.pop_back();
    fputc(']', out_);
}

void JsonWriter::key(std::string_view k) {
    separator();
    fprintf(out_, "\"%s\":", json_escape(k).c_str());
    after_key_ = true;
}

void JsonWriter::string(std::string_view s) {
    separator();
    fprintf(out_, "\"%s\"", json_escape(s).c_str());
}

void JsonWriter::raw(std::string_view literal) {
    separator();
    fwrite(literal.data(), 1, literal.size(), out_);
}

void JsonWriter::string_array(const std::vector<std::string> &items) {
    begin_array();
    for (const auto &i : items) string(i);
    end_array();
}

void JsonWriter::finish() { fputc('\n', out_); }

}  // namespace ufi_info
