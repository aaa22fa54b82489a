// The font stacks every page chaoslab writes uses (report.html, the batch index, the class page,
// the sequence diagram). The course is Japanese and consumers print Japanese: after the usual
// Latin faces come Japanese ones (macOS, Windows, then Linux's Noto and IPA), so that Japanese
// text gets a Japanese face rather than a Chinese one picked by fallback, or tofu boxes.

/** Proportional text: the system face for Latin, then Japanese faces. */
export const TEXT_FONTS =
  'system-ui,-apple-system,"Segoe UI",Roboto,"Hiragino Sans","Hiragino Kaku Gothic ProN","Yu Gothic UI","Yu Gothic",Meiryo,"Noto Sans CJK JP","Noto Sans JP","IPAexGothic","IPAPGothic","IPAGothic",sans-serif';

/** Code, wire lines and output: monospaced Latin, then Japanese faces (fixed-width ones first). */
export const MONO_FONTS =
  'ui-monospace,SFMono-Regular,Menlo,Consolas,"Noto Sans Mono CJK JP","MS Gothic","Osaka-Mono","IPAGothic","Hiragino Sans","Yu Gothic",Meiryo,"Noto Sans CJK JP",monospace';
