// GeoDL's number parameters in QGIS's own widgets (a GUI QgsApplication, offscreen): a
// sentinel minimum reads as its word, whole numbers show no decimals, the value read back
// is the one the engine expects, and other algorithms' number boxes stay QGIS's.
#include <gtest/gtest.h>

#include <memory>

#include <qgsapplication.h>
#include <qgsdoublespinbox.h>
#include <qgsgui.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingcontext.h>
#include <qgsprocessingguiregistry.h>
#include <qgsprocessingparameters.h>
#include <qgsprocessingregistry.h>
#include <qgsspinbox.h>

#include "geodlnumberwidgetwrapper.h"
#include "geodlplugin.h"

namespace
{

class NumberWidgetTest : public ::testing::Test
{
  protected:
    void SetUp() override { mPlugin.initGui(); }
    void TearDown() override { mPlugin.unload(); }

    const QgsProcessingParameterDefinition *parameter( const QString &algorithm, const QString &name )
    {
      const QgsProcessingAlgorithm *alg = QgsApplication::processingRegistry()->algorithmById( algorithm );
      return alg ? alg->parameterDefinition( name ) : nullptr;
    }

    // The widget QGIS's dialogs make for a parameter; the wrapper keeps it.
    std::unique_ptr<QgsAbstractProcessingParameterWidgetWrapper> wrap( const QgsProcessingParameterDefinition *p,
        QgsProcessingGui::WidgetType type = QgsProcessingGui::Standard )
    {
      std::unique_ptr<QgsAbstractProcessingParameterWidgetWrapper> w( QgsGui::processingGuiRegistry()->createParameterWidgetWrapper( p, type ) );
      if ( w )
        mWidgets.emplace_back( w->createWrappedWidget( mContext ) );
      return w;
    }

    GeoDLPlugin mPlugin { nullptr };
    QgsProcessingContext mContext;
    std::vector<std::unique_ptr<QWidget>> mWidgets;
};

TEST_F( NumberWidgetTest, ASentinelMinimumReadsAsItsWordAndReadsBackAsTheSentinel )
{
  for ( QgsProcessingGui::WidgetType type : { QgsProcessingGui::Standard, QgsProcessingGui::Batch, QgsProcessingGui::Modeler } )
  {
    const auto window = wrap( parameter( QStringLiteral( "geodl:classify" ), QStringLiteral( "WINDOW" ) ), type );
    ASSERT_TRUE( window );
    auto *box = qobject_cast<QgsSpinBox *>( window->wrappedWidget() );
    ASSERT_NE( box, nullptr );
    EXPECT_EQ( box->text(), QStringLiteral( "Automatic" ) ) << type;
    EXPECT_EQ( window->parameterValue().toInt(), 0 );
    window->setParameterValue( 256, mContext );
    EXPECT_EQ( box->text(), QStringLiteral( "256" ) );
    EXPECT_EQ( window->parameterValue().toInt(), 256 );
  }
}

TEST_F( NumberWidgetTest, APercentShowsOneDecimalAndItsAutomaticMinimum )
{
  const auto overlap = wrap( parameter( QStringLiteral( "geodl:classify" ), QStringLiteral( "OVERLAP" ) ) );
  auto *box = qobject_cast<QgsDoubleSpinBox *>( overlap->wrappedWidget() );
  ASSERT_NE( box, nullptr );
  EXPECT_EQ( box->text(), QStringLiteral( "Automatic" ) );
  EXPECT_EQ( box->decimals(), 1 );
  EXPECT_DOUBLE_EQ( overlap->parameterValue().toDouble(), -1.0 );
  overlap->setParameterValue( 12.5, mContext );
  EXPECT_EQ( box->text(), QLocale().toString( 12.5, 'f', 1 ) );
}

TEST_F( NumberWidgetTest, AnOptionalParameterReadsItsDefaultsWordAndLeavesItUnset )
{
  // THREADS is advanced, so optional: at its minimum it is unset, and the default (0: all
  // cores) applies.
  const auto threads = wrap( parameter( QStringLiteral( "geodl:classify" ), QStringLiteral( "THREADS" ) ) );
  auto *box = qobject_cast<QgsSpinBox *>( threads->wrappedWidget() );
  ASSERT_NE( box, nullptr );
  EXPECT_EQ( box->text(), QStringLiteral( "All cores" ) );
  EXPECT_EQ( box->minimum(), 0 );
  EXPECT_FALSE( threads->parameterValue().isValid() );
  threads->setParameterValue( 2, mContext );
  EXPECT_EQ( threads->parameterValue().toInt(), 2 );
  const auto seed = wrap( parameter( QStringLiteral( "geodl:train" ), QStringLiteral( "SEED" ) ) );
  EXPECT_EQ( qobject_cast<QgsSpinBox *>( seed->wrappedWidget() )->text(), QStringLiteral( "Random" ) );
}

TEST_F( NumberWidgetTest, WholeNumbersShowNoDecimals )
{
  const auto epochs = wrap( parameter( QStringLiteral( "geodl:train" ), QStringLiteral( "EPOCHS" ) ) );
  auto *box = qobject_cast<QgsSpinBox *>( epochs->wrappedWidget() );
  ASSERT_NE( box, nullptr );
  EXPECT_FALSE( box->text().contains( QLocale().decimalPoint() ) ) << box->text().toStdString();
}

TEST_F( NumberWidgetTest, OtherNumberParametersKeepQgisBoxAndUnloadingPutsQgisFactoryBack )
{
  QgsProcessingParameterNumber plain( QStringLiteral( "N" ), QStringLiteral( "n" ), Qgis::ProcessingNumberParameterType::Integer,
                                      QVariant(), true, 0, 10 );
  const auto optional = wrap( &plain );
  auto *box = qobject_cast<QgsSpinBox *>( optional->wrappedWidget() );
  ASSERT_NE( box, nullptr );
  EXPECT_EQ( box->minimum(), -1 );  // QGIS's "Not set" one below the minimum
  EXPECT_EQ( box->specialValueText(), box->text() );
  EXPECT_NE( box->text(), QStringLiteral( "Automatic" ) );
  EXPECT_NE( dynamic_cast<GeoDLNumberWidgetWrapper *>( optional.get() ), nullptr );

  mPlugin.unload();
  const auto after = wrap( &plain );
  ASSERT_TRUE( after );
  EXPECT_EQ( dynamic_cast<GeoDLNumberWidgetWrapper *>( after.get() ), nullptr );
  EXPECT_NE( dynamic_cast<QgsProcessingNumericWidgetWrapper *>( after.get() ), nullptr );
  mPlugin.initGui();
}

} // namespace

int main( int argc, char **argv )
{
  ::testing::InitGoogleTest( &argc, argv );
  QgsApplication app( argc, argv, true );
  QgsApplication::init();
  QgsApplication::initQgis();
  const int result = RUN_ALL_TESTS();
  QgsApplication::exitQgis();
  return result;
}
