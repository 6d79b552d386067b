// The host prelude's race check. A serial run hides the races a GPU has: here a thread that
// reads what another wrote sees the write whether or not a barrier or a launch boundary lies
// between, and the next block finds the shared memory the last one left. So the arrays of
// generated code (ORCH_SHARED, and ORCH_GLOBAL and ORCH_SCRATCH for what a launch writes) are,
// on the host, objects whose every element access is checked and recorded, per byte:
//   - shared memory: the last write and read as (barrier interval << 11 | thread), 2047 for
//     several readers; intervals count a block's barriers from a base each block raises, so a
//     byte written before the block began is one its threads never wrote;
//   - global memory (the launch's outputs and scratch, listed by the emulator before it runs):
//     the last writer and reader as (launch << 42 | (block << 10 | thread) + 1), all 42 low
//     bits set for several readers; launches count up on the host thread, so records of
//     earlier launches need no clearing. Blocks run in any order and all at once, so a byte
//     two threads of one launch touch, one of them writing, is a race; only the next launch
//     sees a launch's writes.
// A thread touching a byte that another touched in the same interval (launch), one of them
// writing, is a race; so is reading a shared byte the block never wrote, and touching shared
// memory past what the launch asks for. An access the check finds out of bounds is not made.
// Every fault, with the emulator's others (reads outside a staged box, shuffles in a partial
// warp), goes through orch_fault, which counts them and keeps the first.
// Stricter than CUDA in one way: a barrier orders global accesses within a block, which this
// check ignores (no generated launch exchanges values through global memory; its phases take
// disjoint blocks). Scratch is checked as one buffer, not value by value.
#include "codegen/cuda/cuda_impl.h"

namespace orch::codegen::cuda_impl {

std::string host_race_check() {
  return R"p(#include <stdarg.h>
#include <vector>
static thread_local int orch_faults = 0;
static thread_local char orch_first_fault[256];
extern "C" int orch_emulate_take_faults(char* first, int size) {
  int n = orch_faults;
  snprintf(first, size, "%s", orch_first_fault);
  orch_faults = 0;
  return n;
}
// Counts a fault and keeps the first's text: "block <b>: thread <t> " and the formatted rest.
static void orch_fault(const char* format, ...) {
  if (orch_faults++ > 0) return;
  int n = snprintf(orch_first_fault, sizeof orch_first_fault, "block %u: thread %u ", blockIdx.x,
                   threadIdx.x);
  va_list rest;
  va_start(rest, format);
  vsnprintf(orch_first_fault + n, sizeof orch_first_fault - n, format, rest);
  va_end(rest);
}
static void orch_race(long long byte, const char* what, const char* where, const char* whose) {
  orch_fault("%s byte %lld of %s%s", what, byte, where, whose);
}
// Checks an access of `size` bytes at `byte` of an array whose records are `written` and `read`
// by `me` (its records in the current interval are those from `now` up); `who` names another
// record's thread.
static void orch_check(unsigned long long* written, unsigned long long* read, long long byte,
                       int size, bool write, unsigned long long me, unsigned long long now,
                       unsigned long long several, const char* where, const char* between,
                       void (*who)(unsigned long long, char*, int)) {
  for (long long b = byte; b < byte + size; ++b) {
    unsigned long long& w = written[b];
    unsigned long long& r = read[b];
    const char* done = nullptr;
    unsigned long long other = 0;
    if (w >= now && w != me) {
      done = "wrote";
      other = w;
    } else if (write && r >= now && r != me) {
      done = "read";
      other = r;
    }
    if (done != nullptr) {
      char whom[48], whose[128];
      if (other == several)
        snprintf(whom, sizeof whom, "other threads");
      else
        who(other, whom, sizeof whom);
      snprintf(whose, sizeof whose, " that %s %s %s", whom, done, between);
      return orch_race(b, write ? "writes" : "reads", where, whose);
    }
    if (write)
      w = me;
    else
      r = r >= now && r != me ? several : me;
  }
}

// Shared memory: what the launch asks for of orch_shared.
static thread_local unsigned long long orch_shared_written[orch_shared_bytes];
static thread_local unsigned long long orch_shared_read[orch_shared_bytes];
static thread_local long long orch_shared_limit = 0;
static thread_local unsigned long long orch_block_base = 0;
static thread_local unsigned long long orch_barriers[1024];  // passed by each thread of the block
extern "C" void orch_emulate_begin_block(long long shared_bytes) {
  orch_shared_limit = shared_bytes;
  orch_block_base += 1ULL << 24;
  // Records hold (base + barriers) << 11: start over before that drops bits (2^28 blocks).
  if (orch_block_base >= 1ULL << 52) {
    for (long long b = 0; b < orch_shared_bytes; ++b)
      orch_shared_written[b] = orch_shared_read[b] = 0;
    orch_block_base = 1ULL << 24;
  }
  for (unsigned long long& b : orch_barriers) b = 0;
}
static void orch_shared_thread(unsigned long long record, char* text, int size) {
  snprintf(text, size, "thread %d", (int)(record & 2047));
}
// Checks an access; false when it lies outside what the launch asks for.
static bool orch_shared_access(const void* p, int size, bool write) {
  long long byte = (const unsigned char*)p - orch_shared;
  if (byte < 0 || byte + size > orch_shared_limit) {
    orch_race(byte, "touches", "shared memory", " (past what the launch asks for)");
    return false;
  }
  for (long long b = byte; b < byte + size; ++b)
    if (!write && orch_shared_written[b] >> 11 < orch_block_base) {
      orch_race(b, "reads", "shared memory", " that no thread of its block wrote");
      return true;
    }
  unsigned long long now = (orch_block_base + orch_barriers[threadIdx.x]) << 11;
  orch_check(orch_shared_written, orch_shared_read, byte, size, write, now | threadIdx.x, now,
             now | 2047, "shared memory", "with no barrier between", orch_shared_thread);
  return true;
}
template <class T> struct orch_shared_element {
  T* p;
  operator T() const { return orch_shared_access(p, sizeof(T), false) ? *p : T(); }
  void operator=(T v) const {
    if (orch_shared_access(p, sizeof(T), true)) *p = v;
  }
};
template <class T> struct orch_shared_array {
  T* base;
  orch_shared_element<T> operator[](long long i) const { return {base + i}; }
};
#define ORCH_SHARED(T, name, offset) \
  const orch_shared_array<T> name { (T*)(orch_shared + (offset)) }

// Global memory: the buffers the coming launch may write, and the launch's place in the count.
struct orch_buffer {
  unsigned char* base;
  long long bytes;
  const char* name;
  std::vector<unsigned long long> written, read;
};
static thread_local std::vector<orch_buffer> orch_buffers;  // the first orch_watched
static thread_local int orch_watched = 0;
static thread_local unsigned long long orch_launch = 0;
constexpr unsigned long long orch_thread_bits = (1ULL << 42) - 1;
extern "C" void orch_emulate_buffers(void* const* bases, const long long* bytes,
                                     const char* const* names, int n) {
  // Records hold the launch in their top 22 bits: start over before it wraps.
  if (++orch_launch == 1ULL << 22) {
    orch_buffers.clear();
    orch_launch = 1;
  }
  if ((int)orch_buffers.size() < n) orch_buffers.resize(n);
  for (int i = 0; i < n; ++i) {
    orch_buffer& b = orch_buffers[i];
    b.base = (unsigned char*)bases[i];
    b.bytes = bytes[i];
    b.name = names[i];
    if ((long long)b.written.size() < bytes[i]) {
      b.written.resize(bytes[i], 0);
      b.read.resize(bytes[i], 0);
    }
  }
  orch_watched = n;
}
static void orch_global_thread(unsigned long long record, char* text, int size) {
  unsigned long long id = (record & orch_thread_bits) - 1;
  snprintf(text, size, "block %llu thread %llu", id >> 10, id & 1023);
}
// Checks an access; false when it lies outside the buffer.
static bool orch_global_access(orch_buffer* b, const void* p, int size, bool write) {
  long long byte = (const unsigned char*)p - b->base;
  if (byte < 0 || byte + size > b->bytes) {
    orch_race(byte, "touches", b->name, " (outside it)");
    return false;
  }
  unsigned long long now = orch_launch << 42;
  unsigned long long me = now | (((unsigned long long)blockIdx.x << 10 | threadIdx.x) + 1);
  orch_check(b->written.data(), b->read.data(), byte, size, write, me, now,
             now | orch_thread_bits, b->name, "in the same launch", orch_global_thread);
  return true;
}
template <class T> struct orch_global_element {
  T* p;
  orch_buffer* b;
  operator T() const { return !b || orch_global_access(b, p, sizeof(T), false) ? *p : T(); }
  void operator=(T v) const {
    if (!b || orch_global_access(b, p, sizeof(T), true)) *p = v;
  }
};
// A pointer to a buffer the launch may write; b is null for one the emulator did not list.
template <class T> struct orch_global {
  T* base;
  orch_buffer* b;
  orch_global_element<T> operator[](long long i) const { return {base + i, b}; }
};
template <class T> static orch_global<T> orch_global_at(T* p) {
  for (int i = 0; i < orch_watched; ++i) {
    orch_buffer& b = orch_buffers[i];
    if ((unsigned char*)p >= b.base && (unsigned char*)p < b.base + b.bytes) return {p, &b};
  }
  return {p, nullptr};
}
#define ORCH_GLOBAL(T) orch_global<T>
#define ORCH_SCRATCH(T, name, offset) \
  const orch_global<T> name = orch_global_at((T*)(scratch + (offset)))
)p";
}

}  // namespace orch::codegen::cuda_impl
