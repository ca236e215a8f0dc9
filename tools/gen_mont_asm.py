#!/usr/bin/env python3
"""Writes native/src/field/mont_asm.hpp: Montgomery multiplication, modular addition and
subtraction for 4 and 6 64-bit limbs in x86-64 inline assembly (mulx with two independent carry
chains, adcx and adox; branch-free final corrections with cmov, since a mispredicted branch on a
random borrow costs more than the whole addition).

Per row i: t += a * b[i] (low halves on the OF chain, high halves on the CF chain), then
m = t0 * inv, t += m * p, and the zero low word is dropped by renaming registers. The moduli
leave their top bit free, so t never needs a word beyond N+1 (the "no-carry" variant).
Run: python3 tools/gen_mont_asm.py > native/src/field/mont_asm.hpp
"""

def gen(n):
    T = [f"t{i}" for i in range(n + 1)]
    lines = []
    def e(s):
        lines.append(s)
    for i in range(n):
        e(f"movq {8*i}(%[b]), %%rdx")
        e("xorl %k[z], %k[z]")
        if i == 0:
            e(f"mulxq 0(%[a]), %[{T[0]}], %[{T[1]}]")
            for j in range(1, n):
                e(f"mulxq {8*j}(%[a]), %[lo], %[{T[j+1]}]")
                e(f"adcxq %[lo], %[{T[j]}]")
            e(f"adcxq %[z], %[{T[n]}]")
        else:
            for j in range(n):
                if j < n - 1:
                    e(f"mulxq {8*j}(%[a]), %[lo], %[hi]")
                    e(f"adoxq %[lo], %[{T[j]}]")
                    e(f"adcxq %[hi], %[{T[j+1]}]")
                else:
                    e(f"mulxq {8*j}(%[a]), %[lo], %[{T[n]}]")
                    e(f"adoxq %[lo], %[{T[j]}]")
                    e(f"adcxq %[z], %[{T[n]}]")
                    e(f"adoxq %[z], %[{T[n]}]")
        # reduction
        e(f"movq %[{T[0]}], %%rdx")
        e("imulq %[inv], %%rdx")
        e("xorl %k[z], %k[z]")
        for j in range(n):
            e(f"mulxq %[q{j}], %[lo], %[hi]")
            e(f"adoxq %[lo], %[{T[j]}]")
            e(f"adcxq %[hi], %[{T[j+1]}]")
        e(f"adoxq %[z], %[{T[n]}]")
        T = T[1:] + T[:1]
    # t < 2p: subtract p into spare registers and keep the difference unless it borrowed
    spare = ["lo", "hi", "z", "a", "b"]
    e(f"movq %[{T[0]}], %%rdx")
    e(f"subq %[q0], %%rdx")
    for k in range(1, n):
        e(f"movq %[{T[k]}], %[{spare[k-1]}]")
        e(f"sbbq %[q{k}], %[{spare[k-1]}]")
    e(f"cmovncq %%rdx, %[{T[0]}]")
    for k in range(1, n):
        e(f"cmovncq %[{spare[k-1]}], %[{T[k]}]")
    body = "\n".join(f'      "{l}\\n\\t"' for l in lines)
    outs = ", ".join(f'[t{i}] "=&r"(t{i})' for i in range(n + 1))
    ins = ", ".join([f'[q{j}] "m"(P::MODULUS[{j}])' for j in range(n)] + ['[inv] "m"(P::INV)',
                     f'"m"(*(const uint64_t(*)[{n}])a)', f'"m"(*(const uint64_t(*)[{n}])b)'])
    result = "; ".join(f"r[{k}] = {T[k]}" for k in range(n))
    decl = ", ".join(f"t{i}" for i in range(n + 1))
    return f"""template <class P>
static inline __attribute__((always_inline)) void mont_mul_asm{n}(uint64_t* r, const uint64_t* a, const uint64_t* b) {{
  uint64_t {decl}, lo, hi, z;
  asm("" // {n}-limb Montgomery product, fully reduced
{body}
      : {outs}, [lo] "=&r"(lo), [hi] "=&r"(hi), [z] "=&r"(z), [a] "+r"(a), [b] "+r"(b)
      : {ins}
      : "rdx", "cc");
  {result};
}}
"""


def gen_addsub(n):
    regs_r = [f"r{i}" for i in range(n)]
    regs_s = [f"s{i}" for i in range(n)]
    # a + b, then subtract p unless that borrows (p < 2^(64n-1): the sum has no carry out)
    add = []
    for i in range(n):
        add.append(f"movq {8*i}(%[a]), %[r{i}]")
    add.append("addq 0(%[b]), %[r0]")
    for i in range(1, n):
        add.append(f"adcq {8*i}(%[b]), %[r{i}]")
    for i in range(n):
        add.append(f"movq %[r{i}], %[s{i}]")
    add.append("subq %[q0], %[s0]")
    for i in range(1, n):
        add.append(f"sbbq %[q{i}], %[s{i}]")
    for i in range(n):
        add.append(f"cmovncq %[s{i}], %[r{i}]")
    # a - b, then add p back when it borrowed
    sub = []
    for i in range(n):
        sub.append(f"movq {8*i}(%[a]), %[r{i}]")
        sub.append(f"movq $0, %[s{i}]")
    sub.append("subq 0(%[b]), %[r0]")
    for i in range(1, n):
        sub.append(f"sbbq {8*i}(%[b]), %[r{i}]")
    for i in range(n):
        sub.append(f"cmovcq %[q{i}], %[s{i}]")
    sub.append("addq %[s0], %[r0]")
    for i in range(1, n):
        sub.append(f"adcq %[s{i}], %[r{i}]")
    out = []
    for name, lines in (("add", add), ("sub", sub)):
        body = "\n".join(f'      "{l}\\n\\t"' for l in lines)
        outs = ", ".join([f'[r{i}] "=&r"(r{i})' for i in range(n)] + [f'[s{i}] "=&r"(s{i})' for i in range(n)])
        ins = ", ".join([f'[q{j}] "m"(P::MODULUS[{j}])' for j in range(n)] + ['[a] "r"(a)', '[b] "r"(b)',
                         f'"m"(*(const uint64_t(*)[{n}])a)', f'"m"(*(const uint64_t(*)[{n}])b)'])
        decl = ", ".join(regs_r + regs_s)
        result = "; ".join(f"out[{k}] = r{k}" for k in range(n))
        out.append(f"""template <class P>
static inline __attribute__((always_inline)) void mod_{name}_asm{n}(uint64_t* out, const uint64_t* a, const uint64_t* b) {{
  uint64_t {decl};
  asm(""
{body}
      : {outs}
      : {ins}
      : "cc");
  {result};
}}
""")
    return "\n".join(out)

print("""// Generated by tools/gen_mont_asm.py: do not edit by hand.
// Montgomery products (mulx/adcx/adox, BMI2 + ADX), additions and subtractions for 4 and 6 limbs,
// all fully reduced and branch-free. Require the modulus's top bit to be free (Fp checks it).
#pragma once
#include <cstdint>

namespace cuzk::field::detail {
""")
print(gen(4))
print(gen(6))
print(gen_addsub(4))
print(gen_addsub(6))
print("}  // namespace cuzk::field::detail")
