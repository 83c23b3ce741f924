// The entry points of one copy of the kernels, named by NAME (see Kernels.h): included by
// Kernels.h, so each copy's definitions are checked against them, and once per copy by
// CMetricKernels.c, which calls them. Documented in CMetricKernels.h. Not a public header.

void NAME(dmetric_blurred)(const float *a, float shift, int squares, long width, long height, const float taps[6], float *scratch,
                           long stride, float *mean, float *square);
void NAME(dmetric_sums)(const float *p1, const float *p2, float shift, const float *mu1, const float *s11, long width, long height,
                        const float taps[6], long stride, float *passes, float *columns, double sums[6]);
void NAME(dmetric_pair_sums)(const float *p1, const float *p2, float shift, int ssim, long width, long height, const float taps[6],
                             long stride, float *passes, float *columns, double sums[6]);
void NAME(dmetric_xyb)(const float *r, const float *g, const float *bl, long count, float *x, float *y, float *b);
void NAME(dmetric_linear)(const unsigned char *pixels, long count, int bands, const float lut[256], float *r, float *g, float *b);
void NAME(dmetric_first_scale)(const unsigned char *pixels, long width, long height, int bands, const float lut[256],
                               long first_row, long end_row, float *x, float *y, float *b, float *hr, float *hg, float *hb,
                               float *scratch);
void NAME(dmetric_halved)(const float *src, long width, long height, float *dst);
int NAME(dmetric_chroma_halved)(const unsigned char *in, long width, long height, int bands, unsigned char *out);
int NAME(dmetric_block_statistics)(const unsigned char *pixels, long width, long height, int bands, long side, double *means,
                                   double *activity);
