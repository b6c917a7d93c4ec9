// Clang's thread-safety annotations (-Wthread-safety): which mutex guards a
// member, which functions need one held. The clang build (the sanitizer and
// fuzzing pass of CI) checks them at compile time; to other compilers they
// are nothing. See base/mutex.h for the annotated mutex and its locks.
#pragma once

#if defined(__clang__)
#define RL_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define RL_THREAD_ANNOTATION(x)
#endif

// A type that is a lock (a mutex).
#define RL_CAPABILITY(name) RL_THREAD_ANNOTATION(capability(name))
// A type whose objects hold a lock for their lifetime (a lock guard).
#define RL_SCOPED_CAPABILITY RL_THREAD_ANNOTATION(scoped_lockable)
// A member read or written only with `mu` held.
#define RL_GUARDED_BY(mu) RL_THREAD_ANNOTATION(guarded_by(mu))
// A pointer member whose pointee is read or written only with `mu` held.
#define RL_PT_GUARDED_BY(mu) RL_THREAD_ANNOTATION(pt_guarded_by(mu))
// `mu` is taken before the mutexes named after it, never after.
#define RL_ACQUIRED_BEFORE(...) RL_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
// A function called with the mutexes held.
#define RL_REQUIRES(...) RL_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// A function that takes them (and returns with them held).
#define RL_ACQUIRE(...) RL_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
// A function that takes them when it returns `result`.
#define RL_TRY_ACQUIRE(...) RL_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// A function that lets them go.
#define RL_RELEASE(...) RL_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// A function called without them held (it takes them itself).
#define RL_EXCLUDES(...) RL_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// A function the analysis cannot follow; its comment says why it is safe.
#define RL_NO_THREAD_SAFETY_ANALYSIS RL_THREAD_ANNOTATION(no_thread_safety_analysis)
