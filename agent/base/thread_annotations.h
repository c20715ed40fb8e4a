// Clang thread-safety annotations (-Wthread-safety, on in clang builds; see CMakeLists.txt), as in
// leveldb's port/thread_annotations.h. They turn "this field is guarded by that mutex" from a
// comment into a compile error when broken. Empty for other compilers. Use them with
// nodehook::Mutex (agent/base/mutex.h): libstdc++'s std::mutex carries no annotations.
#pragma once

#if defined(__clang__)
#define NODEHOOK_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define NODEHOOK_THREAD_ANNOTATION(x)
#endif

// A field read or written only with the mutex held.
#define GUARDED_BY(x) NODEHOOK_THREAD_ANNOTATION(guarded_by(x))
// A function the caller must call with the mutex held (the "...Locked" helpers).
#define REQUIRES(...) NODEHOOK_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// A function that takes the mutex itself, so the caller must not hold it.
#define EXCLUDES(...) NODEHOOK_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define CAPABILITY(x) NODEHOOK_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY NODEHOOK_THREAD_ANNOTATION(scoped_lockable)
#define ACQUIRE(...) NODEHOOK_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) NODEHOOK_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) NODEHOOK_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) NODEHOOK_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) NODEHOOK_THREAD_ANNOTATION(assert_capability(x))
