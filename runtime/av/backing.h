// Where an address table's memory lives: the process heap (an unnamed AV) or shared-memory
// files (a named AV shared by the processes of a node). The table (table.h) asks for its header
// and its chunks through this interface and never knows which one it has.
#pragma once

#include "runtime/av/table_layout.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ufi::runtime::av {

enum class ChunkKind : char { Entries = 'e', Arena = 'a' };

class Backing {
  public:
    virtual ~Backing() = default;
    Backing() = default;
    Backing(const Backing &) = delete;
    Backing &operator=(const Backing &) = delete;

    layout::TableHeader *header() const { return header_; }
    bool shared() const { return shared_; }

    // Creates chunk k (zero-filled) and maps it; the caller holds the table lock. 0, -FI_ENOMEM
    // (no memory, /dev/shm full) or -FI_EOTHER.
    virtual int create_chunk(ChunkKind kind, uint32_t k, size_t bytes, void *&out) noexcept = 0;
    // Maps chunk k that another process created (shared backings only).
    virtual int map_chunk(ChunkKind kind, uint32_t k, size_t bytes, void *&out) noexcept = 0;
    virtual void unmap_chunk(void *p, size_t bytes) noexcept = 0;

  protected:
    layout::TableHeader *header_ = nullptr;
    bool shared_ = false;
};

// A private table on anonymous memory (pages cost nothing until touched). 0 or -FI_ENOMEM.
int make_heap_backing(const layout::Geometry &g, std::unique_ptr<Backing> &out) noexcept;

// Opens the named table shared through files in `dir` (UFI_AV_SHM_DIR, /dev/shm by default),
// creating it with geometry `g` unless `read_only`. Lifetime: every process that has it open
// holds a shared flock on its file; the process whose close finds no other holder unlinks every
// file, and an opener that finds a table no live process holds (its users died) deletes it and
// starts afresh. Errors: -FI_ENOENT (read_only and it does not exist), -FI_EACCES (permissions),
// -FI_EINVAL (a bad name, or a file that is not a ufi AV of this layout), -FI_EBUSY (another
// process kept the file locked exclusively for UFI_AV_SHM_LOCK_TIMEOUT ms; *why names it), -FI_ENOMEM, -FI_EOTHER;
// *why says which, and never repeats the name (the caller logs it, shortened). *created tells whether this call made it.
int open_shm_backing(const std::string &dir, const std::string &name, bool read_only,
                     const layout::Geometry &g, std::unique_ptr<Backing> &out, bool &created,
                     std::string *why) noexcept;

// The file name a named AV uses in `dir`: "ufi-av-" + the name with every byte outside
// [A-Za-z0-9._-] written as %XX; empty when the name is empty or too long (over 200 bytes once
// encoded).
std::string shm_file_name(const std::string &name);

}  // namespace ufi::runtime::av
