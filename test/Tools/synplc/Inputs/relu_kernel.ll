; A hand-written ReLU for user-kernel.test: out[i] = in[i] > 0 ? in[i] : 0
; over the 50 x 64 activations of the hidden layer, one thread.
;
; synpl.kernel relu_kernel(f32[50,64]) -> f32[50,64]

define void @relu_kernel(ptr %in, ptr %out) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %src = getelementptr inbounds float, ptr %in, i64 %i
  %x = load float, ptr %src, align 4
  %positive = fcmp ogt float %x, 0.000000e+00
  %y = select i1 %positive, float %x, float 0.000000e+00
  %dst = getelementptr inbounds float, ptr %out, i64 %i
  store float %y, ptr %dst, align 4
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, 3200
  br i1 %done, label %exit, label %loop

exit:
  ret void
}
