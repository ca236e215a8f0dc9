/* The circuit's .dat tables (circom --c), embedded so that one file is the whole library: the
 * compile step assembles this in the folder that holds circuit.dat. */
  .section .rodata
  .balign 64
  .globl cuzk_witness_dat_begin
  .hidden cuzk_witness_dat_begin
cuzk_witness_dat_begin:
  .incbin "circuit.dat"
  .globl cuzk_witness_dat_end
  .hidden cuzk_witness_dat_end
cuzk_witness_dat_end:
  .section .note.GNU-stack,"",@progbits
