// Hopper's warpgroup tensor cores, shared by gemm_wgmma.cl (register-staged TF32 tiles) and
// gemm_wgmma_packed.cl (tiles copied from operands packed by gemm_pack_tf32.cl or
// gemm_pack_16bit.cl), each appended after it and after storage.cl: the tile tunables every wgmma
// kernel has, matrix descriptors, the proxy and wgmma fences, wgmma.mma_async for N = 64, 128 and
// 256, and the store of the accumulators into C of the storage type.
// wgmma is PTX for sm_90a only: the host builds these files only on compute capability 9.x.

// ---- Tunables ----
#ifndef BM
#define BM 128  // rows of C per work-group: WGS warpgroups of BM / WGS rows, each in m64 blocks
#endif
#ifndef BN
#define BN 128  // columns of C per work-group: the N of every wgmma (64, 128 or 256)
#endif
#ifndef WGS
#define WGS 1  // warpgroups (128 work-items each) per work-group, stacked along M
#endif

// ---- Derived ----
#define THREADS (128 * WGS)
#define FMW (BM / (64 * WGS))  // m64 blocks per warpgroup
#define ACC (BN / 2)           // accumulators per work-item of one m64 x BN block

// Round to the nearest TF32 value (10 mantissa bits), ties away from zero, as cuBLAS does.
static inline uint to_tf32(const float x) {
  uint r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

// Matrix descriptor of a K-major tile without swizzle (PTX ISA, "Matrix Descriptor Format"):
// start address, leading and stride byte offsets, each in 16-byte units.
static inline ulong wgmma_desc(const local uint* p, const uint leading_bytes, const uint stride_bytes) {
  const uint address = (uint)(size_t)p;
  return (ulong)((address & 0x3FFFF) >> 4) | ((ulong)(leading_bytes >> 4) << 16) | ((ulong)(stride_bytes >> 4) << 32);
}

// Local writes by work-items (the generic proxy) visible to wgmma's reads (the async proxy).
static inline void fence_async_local(void) { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// wgmma is an sm_90a instruction, while NVIDIA's OpenCL compiler targets sm_90: every wgmma line
// starts with this comment marker, which the host removes before building the PTX for sm_90a
// (ProgramSource::ptx_target). Each asm block is one PTX line, so one marker covers it.
#define SM90A "//sm_90a "
static inline void wgmma_fence(void) { asm volatile(SM90A "wgmma.fence.sync.aligned;" ::: "memory"); }
static inline void wgmma_commit(void) { asm volatile(SM90A "wgmma.commit_group.sync.aligned;" ::: "memory"); }
static inline void wgmma_wait_all(void) { asm volatile(SM90A "wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
// Wait until at most the newest group of this warp is in flight.
static inline void wgmma_wait_newest(void) { asm volatile(SM90A "wgmma.wait_group.sync.aligned 1;" ::: "memory"); }

// The accumulators are written by the asynchronous wgmma, which the compiler cannot see: an empty
// asm that "modifies" each of them keeps the compiler from moving their reads or writes across
// the wgmma fence and wait on either side of it.
static inline void fence_accumulators(float* acc) {
#pragma unroll
  for (int i = 0; i < FMW * ACC; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}

// The input type of the wgmma by the storage type (storage.cl's DTYPE): TF32 for fp32 storage
// (k8), fp16 or bf16 (k16). Either way one wgmma consumes 32 bytes of K per row, two core matrices,
// so descriptors, tiles and pipelines in bytes are the same for all three. The 16-bit forms take
// two more immediates, the transposes of A and B: 0, both K-major as packed.
#if DTYPE == 0
#define WGMMA_K_TYPES "k8.f32.tf32.tf32"
#define WGMMA_IMMEDIATES "1, 1"
#elif DTYPE == 1
#define WGMMA_K_TYPES "k16.f32.f16.f16"
#define WGMMA_IMMEDIATES "1, 1, 0, 0"
#else
#define WGMMA_K_TYPES "k16.f32.bf16.bf16"
#define WGMMA_IMMEDIATES "1, 1, 0, 0"
#endif

// d (ACC accumulators of an m64 x BN block) += A (64 x 32 bytes of K) * B (32 bytes of K x BN).
// Accumulator i of lane (g = lane / 4, t = lane % 4) in warp w of the warpgroup: row
// 16w + g + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2t + i % 2, as mma.sync's m16n8 fragments side
// by side.
#if BN == 64
// 32 accumulators per thread.
static inline void wgmma_mma(float* d, const ulong desc_a, const ulong desc_b) {
  asm volatile(
      SM90A "{ .reg .pred p; setp.ne.b32 p, %34, 0; "
      "wgmma.mma_async.sync.aligned.m64n64" WGMMA_K_TYPES " {"
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
      "}, %32, %33, p, " WGMMA_IMMEDIATES "; }"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(1)
      : "memory");
}
#endif
#if BN == 128
// 64 accumulators per thread.
static inline void wgmma_mma(float* d, const ulong desc_a, const ulong desc_b) {
  asm volatile(
      SM90A "{ .reg .pred p; setp.ne.b32 p, %66, 0; "
      "wgmma.mma_async.sync.aligned.m64n128" WGMMA_K_TYPES " {"
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
      "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
      "}, %64, %65, p, " WGMMA_IMMEDIATES "; }"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(1)
      : "memory");
}
#endif
#if BN == 256
// 128 accumulators per thread.
static inline void wgmma_mma(float* d, const ulong desc_a, const ulong desc_b) {
  asm volatile(
      SM90A "{ .reg .pred p; setp.ne.b32 p, %130, 0; "
      "wgmma.mma_async.sync.aligned.m64n256" WGMMA_K_TYPES " {"
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
      "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
      "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
      "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
      "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
      "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
      "}, %128, %129, p, " WGMMA_IMMEDIATES "; }"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(1)
      : "memory");
}
#endif


// C = act(alpha * acc + beta * C + bias) (gemm_epilogue.cl) for the FMW m64 x BN blocks of this
// work-item's warpgroup, within M x N (Cb: this batch entry of C), rounded to the storage type.
static inline void store_accumulators(const float* acc, global STORAGE* Cb, const int ldc, const int M, const int N,
                                      const int m0, const int n0, const float alpha,
                                      const float beta GEMM_EPILOGUE_PARAMS) {
  const int tid = get_local_id(0);
  const int warpgroup = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int fm = 0; fm < FMW; ++fm) {
#pragma unroll
    for (int i = 0; i < ACC; ++i) {
      const int m = m0 + (warpgroup * FMW + fm) * 64 + 16 * warp + g + 8 * ((i / 2) % 2);
      const int n = n0 + 8 * (i / 4) + 2 * t + i % 2;
      if (m < M && n < N) {
        const long dst = (long)m * ldc + n;
        float result = alpha * acc[fm * ACC + i];
        if (beta != 0.0f) result += beta * LOAD(Cb, dst);
        STORE(GEMM_EPILOGUE(result, n), Cb, dst);
      }
    }
  }
}
