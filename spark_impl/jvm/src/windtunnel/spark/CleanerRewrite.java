package windtunnel.spark;

import org.apache.xbean.asm9.ClassReader;
import org.apache.xbean.asm9.ClassVisitor;
import org.apache.xbean.asm9.ClassWriter;
import org.apache.xbean.asm9.Label;
import org.apache.xbean.asm9.MethodVisitor;
import org.apache.xbean.asm9.Opcodes;

/**
 * The bytecode rewrite behind {@link ClosureChecks}, with Spark's shaded ASM (a class of its
 * own, so the agent's entry class loads where ASM is not on the class path).
 */
final class CleanerRewrite {
  static final String CLEAN = "clean";
  static final String RETURNS_CLOSURE = "(Ljava/lang/Object;ZZ)Ljava/lang/Object;";
  static final String RETURNS_NOTHING = "(Ljava/lang/Object;ZZ)V";
  static final String RENAMED = "clean$windtunnelChecked";
  static final String CHECKS = "windtunnel/spark/ClosureChecks";

  private CleanerRewrite() {}

  /** {@code cleaner}'s bytes with the check in front of {@code clean}, or null without it. */
  static byte[] rewrite(byte[] cleaner) {
    ClassReader reader = new ClassReader(cleaner);
    ClassWriter writer = new ClassWriter(reader, 0);
    String[] found = {null};
    int[] access = {0};
    reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
      @Override
      public MethodVisitor visitMethod(
          int flags, String method, String desc, String signature, String[] exceptions) {
        if (CLEAN.equals(method) && found[0] == null
            && (RETURNS_CLOSURE.equals(desc) || RETURNS_NOTHING.equals(desc))) {
          found[0] = desc;
          access[0] = flags;
          return super.visitMethod(flags, RENAMED, desc, signature, exceptions);
        }
        return super.visitMethod(flags, method, desc, signature, exceptions);
      }

      @Override
      public void visitEnd() {
        if (found[0] != null) {
          front(super.visitMethod(access[0], CLEAN, found[0], null, null), found[0]);
        }
        super.visitEnd();
      }
    }, 0);
    return found[0] != null ? writer.toByteArray() : null;
  }

  /**
   * The new {@code clean}: for a closure of a checked class, return it (Spark 4.3's {@code
   * clean} returns the closure, or a cleaned copy of a REPL closure; older ones return
   * nothing); else run Spark's, note the class, and return what it returned.
   */
  private static void front(MethodVisitor code, String desc) {
    boolean returnsClosure = RETURNS_CLOSURE.equals(desc);
    code.visitCode();
    Label clean = new Label();
    code.visitVarInsn(Opcodes.ALOAD, 1);
    code.visitMethodInsn(Opcodes.INVOKESTATIC, CHECKS, "checked", "(Ljava/lang/Object;)Z", false);
    code.visitJumpInsn(Opcodes.IFEQ, clean);
    if (returnsClosure) {
      code.visitVarInsn(Opcodes.ALOAD, 1);
      code.visitInsn(Opcodes.ARETURN);
    } else {
      code.visitInsn(Opcodes.RETURN);
    }
    code.visitLabel(clean);
    code.visitFrame(Opcodes.F_SAME, 0, null, 0, null);
    code.visitVarInsn(Opcodes.ALOAD, 0);
    code.visitVarInsn(Opcodes.ALOAD, 1);
    code.visitVarInsn(Opcodes.ILOAD, 2);
    code.visitVarInsn(Opcodes.ILOAD, 3);
    code.visitMethodInsn(Opcodes.INVOKEVIRTUAL, ClosureChecks.CLEANER, RENAMED, desc, false);
    code.visitVarInsn(Opcodes.ALOAD, 1);
    code.visitMethodInsn(Opcodes.INVOKESTATIC, CHECKS, "passed", "(Ljava/lang/Object;)V", false);
    code.visitInsn(returnsClosure ? Opcodes.ARETURN : Opcodes.RETURN);
    code.visitMaxs(4, 4);
    code.visitEnd();
  }
}
