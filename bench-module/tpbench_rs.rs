// SPDX-License-Identifier: GPL-2.0

//! The Rust loops of tpbench, called by the C harness in the same module.

use core::sync::atomic::{AtomicI32, Ordering};

/// C's `unsigned long` as the kernel crate's bindings spell it (a `usize` on both kernels, where
/// `core::ffi::c_ulong` is a `u64`): mainline's `declare_trace!` passes the arguments to the
/// bindings' `rust_do_trace_*()` as they are.
#[allow(non_camel_case_types)]
type c_ulong = kernel::bindings::__kernel_ulong_t;

use kernel::jump_label::static_branch_unlikely;

mod trace {
    use super::c_ulong;
    use core::ffi::c_void;

    kernel::declare_trace! {
        /// Fires `tpbench_hit` through the series' `declare_trace!`.
        ///
        /// # Safety
        ///
        /// Always safe to call.
        pub(crate) unsafe fn tpbench_hit(i: c_ulong);

        /// Fires `tpbench_txn`, whose arguments a driver reads from its transaction.
        ///
        /// # Safety
        ///
        /// Always safe to call: the event records `t` and does not dereference it.
        pub(crate) unsafe fn tpbench_txn(t: *const c_void, id: u64, flags: u32, size: usize);
    }

    /// What the series' `declare_trace!` generates beside `tpbench_txn()` (patch 8), and
    /// mainline's does not: the same key test, written out here on mainline.
    #[cfg(tpbench_own_enabled)]
    #[inline(always)]
    pub(crate) fn tpbench_txn_enabled() -> bool {
        // SAFETY: The key of a tracepoint is a static key defined by C.
        unsafe {
            kernel::jump_label::static_branch_unlikely!(
                kernel::bindings::__tracepoint_tpbench_txn,
                kernel::bindings::tracepoint,
                key
            )
        }
    }
}

/// `struct tpbench_txn` of tpbench.h: a driver's transaction.
#[repr(C)]
pub(crate) struct Txn {
    id: u64,
    flags: u32,
    code: u32,
    size: usize,
}

/// `TPBENCH_TXNS` of tpbench.h.
const TXNS: usize = 16;

// `struct tracepoint` points to a `struct module`, which bindgen leaves opaque; only the
// address of the static and the key's count are used here. The tracepoint is `static mut`, as
// bindgen declares C statics: C writes to it (its key and its probes).
#[allow(improper_ctypes)]
extern "C" {
    /// The out-of-line C function that calls `trace_tpbench_hit()`.
    fn tpbench_trace_helper(i: c_ulong);
    /// An out-of-line C reader of a static key's count.
    fn tpbench_key_count(key: *mut kernel::bindings::static_key) -> core::ffi::c_int;
    /// What `declare_trace!` calls when the key is on (defined by tpbench_events.c).
    fn rust_do_trace_tpbench_hit(i: c_ulong);
    static mut __tracepoint_tpbench_hit: kernel::bindings::tracepoint;
    /// The transactions the txn loops walk; C defines them `const`.
    static tpbench_txns: [Txn; TXNS];
}

/// The transaction call `i` of a txn loop works on, as its C twin picks it.
#[inline(always)]
fn txn(i: c_ulong) -> &'static Txn {
    // SAFETY: C defines the array `const` and never writes it, so a shared reference to it
    // is valid for the life of the module.
    let txns = unsafe { &*core::ptr::addr_of!(tpbench_txns) };
    &txns[i % TXNS]
}

/// Hands the transaction's address to an empty asm, as a driver that has just used it holds
/// it in a register. The address goes in as an integer: the asm reads no memory through it.
#[inline(always)]
fn hold(t: &Txn) {
    let address = core::ptr::from_ref(t) as usize;
    // SAFETY: An empty asm statement with no memory access.
    unsafe {
        core::arch::asm!("/* {0} */", in(reg) address, options(nomem, nostack, preserves_flags))
    };
}

/// The `struct static_key` of the `tpbench_hit` tracepoint. Mainline wraps it in a
/// `struct static_key_false`, of which it is the first member, so the address is the same.
#[inline(always)]
fn hit_key() -> *mut kernel::bindings::static_key {
    // SAFETY: Only the address of the C static is taken.
    unsafe { core::ptr::addr_of_mut!(__tracepoint_tpbench_hit.key) }.cast()
}

/// The loop alone; the empty asm consumes the index in a register, without a store.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tpbench_rust_empty(n: c_ulong) {
    for i in 0..n {
        // SAFETY: An empty asm statement with no memory access.
        unsafe {
            core::arch::asm!("/* {0} */", in(reg) i, options(nomem, nostack, preserves_flags))
        };
    }
}

/// `tpbench_rust_trace` without its site, so that `rust_trace - rust_base` is what the site
/// costs, NOP included. The empty asm emits nothing; it claims to update the index in its
/// register, which keeps the index counting up as in the trace loop (whose site needs it as
/// the argument) without a copy. With an input operand instead, LLVM spends a `mov` on arm64;
/// with none, it counts down.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tpbench_rust_base(n: c_ulong) {
    let mut i: c_ulong = 0;
    while i < n {
        // SAFETY: An empty asm statement with no memory access; `i` keeps its value.
        unsafe {
            core::arch::asm!("/* {0} */", inout(reg) i, options(nomem, nostack, preserves_flags))
        };
        // Wrapping: the asm could have set any value, and an overflow check is not the site's.
        i = i.wrapping_add(1);
    }
}

/// `declare_trace!`: the static branch in Rust, C called only when the key is on.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tpbench_rust_trace(n: c_ulong) {
    for i in 0..n {
        // SAFETY: `tpbench_hit` has no safety requirements.
        unsafe { trace::tpbench_hit(i) };
    }
}

/// The wrapper approach: an out-of-line C function per event, on or off.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tpbench_rust_helper(n: c_ulong) {
    for i in 0..n {
        // SAFETY: A plain C function taking an integer.
        unsafe { tpbench_trace_helper(i) };
    }
}

/// Reads the key's count with an inline atomic load: the generic path with its helper inlined.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tpbench_rust_load(n: c_ulong) {
    // SAFETY: The tracepoint is a static defined in C, so the pointer is valid for reads and
    // writes while the kernel runs; its key's count is an `atomic_t`, which has the size and
    // alignment of `AtomicI32` and is only ever accessed atomically.
    let count =
        unsafe { AtomicI32::from_ptr(core::ptr::addr_of_mut!((*hit_key()).enabled.counter)) };
    for i in 0..n {
        if count.load(Ordering::Relaxed) > 0 {
            // SAFETY: The tracepoint has no requirements.
            unsafe { rust_do_trace_tpbench_hit(i) };
        }
    }
}

/// The generic `static_branch_unlikely!` as it was before the series read the count inline: a call
/// to an out-of-line C function per event to read the key's count.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tpbench_rust_count_call(n: c_ulong) {
    let key = hit_key();
    for i in 0..n {
        // SAFETY: `key` points to the tracepoint's static key.
        if unsafe { tpbench_key_count(key) } > 0 {
            // SAFETY: The tracepoint has no requirements.
            unsafe { rust_do_trace_tpbench_hit(i) };
        }
    }
}

/// Rust's static branch on the `tpbench_hit` key, for the harness's functional check.
#[no_mangle]
pub extern "C" fn tpbench_rust_key_is_on() -> bool {
    // SAFETY: The key of a tracepoint is a static key defined by C.
    unsafe { static_branch_unlikely!(__tracepoint_tpbench_hit, kernel::bindings::tracepoint, key) }
}

/// The driver-like loop without its site: the twin of `tpbench_c_txn_base`.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tpbench_rust_txn_base(n: c_ulong) {
    for i in 0..n {
        hold(txn(i));
    }
}

/// `tpbench_rust_txn_base` plus a `declare_trace!` site whose arguments are read through the
/// transaction, as `tpbench_c_txn` reads them.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tpbench_rust_txn(n: c_ulong) {
    for i in 0..n {
        let t = txn(i);
        hold(t);
        // SAFETY: `tpbench_txn` has no safety requirements.
        unsafe { trace::tpbench_txn(core::ptr::from_ref(t).cast(), t.id, t.flags, t.size) };
    }
}

/// What the lazy site calls inside its `if`: `call_tpbench_txn()` where `declare_trace!` makes
/// it (mainline-series), which tests the key no more; elsewhere `tpbench_txn()`, which tests it
/// again, as that kernel's users must.
#[cfg(tpbench_has_call)]
use trace::call_tpbench_txn as lazy_txn_call;
#[cfg(not(tpbench_has_call))]
use trace::tpbench_txn as lazy_txn_call;

/// `tpbench_rust_txn` with its site inside `if tpbench_txn_enabled()`: the arguments are read
/// only on the enabled path, by how the site is written.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tpbench_rust_txn_lazy(n: c_ulong) {
    for i in 0..n {
        let t = txn(i);
        hold(t);
        if trace::tpbench_txn_enabled() {
            // SAFETY: `tpbench_txn` has no safety requirements.
            unsafe { lazy_txn_call(core::ptr::from_ref(t).cast(), t.id, t.flags, t.size) };
        }
    }
}

/// Sixteen `declare_trace!` sites in a row: the twin of `tpbench_c_dense`.
#[no_mangle]
#[inline(never)]
pub extern "C" fn tpbench_rust_dense(n: c_ulong) {
    for i in 0..n {
        // SAFETY: `tpbench_hit` has no safety requirements (each of the 16 calls below).
        unsafe {
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
            trace::tpbench_hit(i);
        }
    }
}
